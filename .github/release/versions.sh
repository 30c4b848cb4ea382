#!/usr/bin/env bash
# The release's names, from the pushed tag and the repository owner, after checking that the tag,
# package.json's version and the chart's appVersion agree (the image tag is the chart's appVersion,
# so a chart can never name an image that was not built for it).
#
#   .github/release/versions.sh TAG OWNER    e.g. v0.2.0 my-org
#
# Prints KEY=value lines for $GITHUB_OUTPUT:
#   version        the release version (the tag without its v)
#   chart_version  the chart's own version (Chart.yaml `version`)
#   image          ghcr.io/<owner>/switchyard (owner lower-cased: registries refuse capitals)
#   chart_registry oci://ghcr.io/<owner>/charts (the chart is pushed there as .../charts/switchyard)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# RELEASE_ROOT: the checkout to read (tests point it at a copy); default: this one.
cd "${RELEASE_ROOT:-$here/../..}"

tag="${1:?usage: versions.sh TAG OWNER}"
owner="${2:?usage: versions.sh TAG OWNER}"
fail() { echo "versions.sh: $*" >&2; exit 1; }

[[ "$tag" =~ ^v([0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?)$ ]] || fail "tag $tag is not v<semver> (v1.2.3 or v1.2.3-rc.1)"
version="${BASH_REMATCH[1]}"
package_version=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' package.json | head -n 1)
app_version=$(sed -n 's/^appVersion: "\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' charts/switchyard/Chart.yaml)
chart_version=$(sed -n 's/^version: \(.*\)$/\1/p' charts/switchyard/Chart.yaml)
[[ "$package_version" == "$version" ]] || fail "package.json says $package_version, the tag $tag: bump it in the release commit"
[[ "$app_version" == "$version" ]] || fail "charts/switchyard/Chart.yaml appVersion says $app_version, the tag $tag: bump it in the release commit"
[[ -n "$chart_version" ]] || fail "charts/switchyard/Chart.yaml has no version"
"$here/changelog-section.sh" "$version" >/dev/null

owner=$(printf '%s' "$owner" | tr '[:upper:]' '[:lower:]')
echo "version=$version"
echo "chart_version=$chart_version"
echo "image=ghcr.io/$owner/switchyard"
echo "chart_registry=oci://ghcr.io/$owner/charts"
