#!/usr/bin/env bash
# The release notes: the changelog's section for the version (its upgrade notes included), then
# how to install or upgrade, then every digest the release produced or was built from.
#
#   VERSION=0.2.0 CHART_VERSION=0.3.0 IMAGE=ghcr.io/o/switchyard IMAGE_DIGEST=sha256:... \
#   NODE_IMAGE=node:24-bookworm-slim@sha256:... RUNTIME_IMAGE=gcr.io/...@sha256:... \
#   CHART_REGISTRY=oci://ghcr.io/o/charts CHART_DIGEST=sha256:... .github/release/notes.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# RELEASE_ROOT: the checkout to read (tests point it at a copy); default: this one.
cd "${RELEASE_ROOT:-$here/../..}"
: "${VERSION:?}" "${CHART_VERSION:?}" "${IMAGE:?}" "${IMAGE_DIGEST:?}" "${NODE_IMAGE:?}" "${RUNTIME_IMAGE:?}" "${CHART_REGISTRY:?}" "${CHART_DIGEST:?}"

section=$("$here/changelog-section.sh" "$VERSION")

cat <<NOTES
$section

## Install or upgrade

\`\`\`sh
helm upgrade --install switchyard $CHART_REGISTRY/switchyard --version $CHART_VERSION -f my-values.yaml
\`\`\`

The chart's default image is \`$IMAGE:$VERSION\`. To pull it by digest, set
\`image.digest=$IMAGE_DIGEST\`. Read the upgrade notes above before upgrading.

## Artifacts

| what | reference |
|---|---|
| image (linux/amd64, linux/arm64; SBOM and provenance attached) | \`$IMAGE:$VERSION@$IMAGE_DIGEST\` |
| chart $CHART_VERSION | \`$CHART_REGISTRY/switchyard:$CHART_VERSION@$CHART_DIGEST\` |
| built from (Node stage) | \`$NODE_IMAGE\` |
| built on (runtime base) | \`$RUNTIME_IMAGE\` |
NOTES
