#!/usr/bin/env bash
# Build the helm CLI from source through the Go module proxy and cache the
# binary outside the repo, keyed by version. Idempotent: a cached binary is
# not rebuilt (no Go needed then). No release tarball can be downloaded here,
# so this is how CI and developers get helm.
#
#   SWITCHYARD_CACHE   cache root (default: $HOME/.cache/switchyard)
#   SWITCHYARD_NICE=1  build under `nice -n 19` (shared developer machines)
#   SWITCHYARD_FORCE=1 rebuild even when the cached binary exists
#
# Prints one line on stdout, HELM=<path> (progress goes to stderr), so callers
# can `eval "$(tests/kit/helm/build.sh)"`.
set -euo pipefail

# Keep in sync with go-wrapper/go.mod (the go.mod decides what is compiled;
# this names the cache dir and is stamped into `helm version`).
HELM_VERSION=v4.3.1

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${SWITCHYARD_CACHE:-$HOME/.cache/switchyard}"
HELM_BIN="$CACHE/helm/$HELM_VERSION/helm"

grep -Eq "^[[:space:]]*helm.sh/helm/v4 $HELM_VERSION( |$)" "$HERE/go-wrapper/go.mod" || {
  echo "build.sh: go-wrapper/go.mod does not pin helm.sh/helm/v4 $HELM_VERSION; update one of them" >&2
  exit 1
}

# shellcheck source=../go-build.sh
source "$HERE/../go-build.sh"
v=helm.sh/helm/v4/internal/version
cached_go_build "helm $HELM_VERSION" "$HELM_BIN" "$HERE/go-wrapper" helm.sh/helm/v4/cmd/helm "-X $v.version=$HELM_VERSION -X $v.gitTreeState=clean"
echo "HELM=$HELM_BIN"
