#!/usr/bin/env bash
# Build the helm CLI from source through the Go module proxy and cache the binary outside the
# repo, keyed by version. Idempotent: a cached binary is not rebuilt (no Go needed then). No
# release tarball can be downloaded here, so this is how CI and developers get helm.
# Prints HELM=<path>; environment as in ../go-build.sh.
set -euo pipefail

# Keep in sync with go-wrapper/go.mod (the go.mod decides what is compiled; this names the cache
# dir and is stamped into `helm version`).
HELM_VERSION=v4.3.1

# shellcheck source=../go-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/../go-build.sh"
v=helm.sh/helm/v4/internal/version
cached_go_tool helm "$HELM_VERSION" helm.sh/helm/v4 helm.sh/helm/v4/cmd/helm "-X $v.version=$HELM_VERSION -X $v.gitTreeState=clean"
