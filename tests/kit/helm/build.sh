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

if [[ -x "$HELM_BIN" && "${SWITCHYARD_FORCE:-0}" != "1" ]]; then
  echo "build.sh: cached $HELM_BIN" >&2
else
  if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then PATH="/usr/local/go/bin:$PATH"; fi
  command -v go >/dev/null || { echo "build.sh: go not found on PATH (needed to build helm)" >&2; exit 1; }
  NICE=()
  if [[ "${SWITCHYARD_NICE:-0}" == "1" ]]; then NICE=(nice -n 19); fi
  mkdir -p "$(dirname "$HELM_BIN")"
  tmp="$HELM_BIN.tmp.$$"
  trap 'rm -f "$tmp"' EXIT
  echo "build.sh: building helm $HELM_VERSION -> $HELM_BIN" >&2
  start=$SECONDS
  v=helm.sh/helm/v4/internal/version
  (
    cd "$HERE/go-wrapper"
    # -mod=readonly: the committed go.mod/go.sum are used as they are; a stale
    # go.mod fails the build instead of being rewritten (run `go mod tidy`).
    CGO_ENABLED=0 GOFLAGS=-mod=readonly GOTOOLCHAIN=local \
      "${NICE[@]}" go build -trimpath \
      -ldflags "-s -w -X $v.version=$HELM_VERSION -X $v.gitTreeState=clean" \
      -o "$tmp" helm.sh/helm/v4/cmd/helm
  )
  mv -f "$tmp" "$HELM_BIN"
  trap - EXIT
  echo "build.sh: built $HELM_BIN in $((SECONDS - start))s" >&2
fi
echo "HELM=$HELM_BIN"
