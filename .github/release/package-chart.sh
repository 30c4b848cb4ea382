#!/usr/bin/env bash
# Packages the chart for a release: a copy whose default image is the one this release pushed
# (ghcr.io/<owner>/switchyard, tag = appVersion), so a fork's chart installs the fork's image.
#
#   .github/release/package-chart.sh IMAGE OUT_DIR [HELM]    e.g. ghcr.io/my-org/switchyard dist
#
# Prints the path of the packaged .tgz.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# RELEASE_ROOT: the checkout to read (tests point it at a copy); default: this one.
cd "${RELEASE_ROOT:-$here/../..}"

image="${1:?usage: package-chart.sh IMAGE OUT_DIR [HELM]}"
out="${2:?usage: package-chart.sh IMAGE OUT_DIR [HELM]}"
helm="${3:-helm}"
[[ "$image" =~ ^[a-z0-9.-]+(:[0-9]+)?/[a-z0-9._/-]+$ ]] || { echo "package-chart.sh: $image is not an image repository" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -R charts/switchyard "$work/switchyard"
default='  repository: ghcr.io/switchyard/switchyard'
grep -qxF "$default" "$work/switchyard/values.yaml" || { echo "package-chart.sh: values.yaml no longer has the line '$default'" >&2; exit 1; }
sed -i "s|^$default\$|  repository: $image|" "$work/switchyard/values.yaml"
mkdir -p "$out"
"$helm" package "$work/switchyard" --destination "$out" >&2
ls "$out"/switchyard-*.tgz | head -n 1
