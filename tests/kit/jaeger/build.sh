#!/usr/bin/env bash
# Build Jaeger's all-in-one (the `jaeger` binary of Jaeger v2) from source through the Go module
# proxy and cache it outside the repo, keyed by version: the trace backend of the tracing suite
# (its OTLP receiver takes the router's spans, its query API gives them back). Idempotent: a cached
# binary is not rebuilt (no Go needed then). No release tarball can be downloaded here.
#
#   SWITCHYARD_CACHE   cache root (default: $HOME/.cache/switchyard)
#   SWITCHYARD_NICE=1  build under `nice -n 19` (shared developer machines)
#   SWITCHYARD_FORCE=1 rebuild even when the cached binary exists
#
# Prints one line on stdout, JAEGER=<path> (progress goes to stderr).
set -euo pipefail

# Keep in sync with go-wrapper/go.mod (the go.mod decides what is compiled; this names the cache dir).
JAEGER_VERSION=v1.75.0

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${SWITCHYARD_CACHE:-$HOME/.cache/switchyard}"
JAEGER_BIN="$CACHE/jaeger/$JAEGER_VERSION/jaeger"

grep -Eq "^[[:space:]]*github.com/jaegertracing/jaeger $JAEGER_VERSION( |$)" "$HERE/go-wrapper/go.mod" || {
  echo "build.sh: go-wrapper/go.mod does not pin github.com/jaegertracing/jaeger $JAEGER_VERSION; update one of them" >&2
  exit 1
}

if [[ -x "$JAEGER_BIN" && "${SWITCHYARD_FORCE:-0}" != "1" ]]; then
  echo "build.sh: cached $JAEGER_BIN" >&2
else
  if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then PATH="/usr/local/go/bin:$PATH"; fi
  command -v go >/dev/null || { echo "build.sh: go not found on PATH (needed to build Jaeger)" >&2; exit 1; }
  NICE=()
  if [[ "${SWITCHYARD_NICE:-0}" == "1" ]]; then NICE=(nice -n 19); fi
  mkdir -p "$(dirname "$JAEGER_BIN")"
  tmp="$JAEGER_BIN.tmp.$$"
  trap 'rm -f "$tmp"' EXIT
  echo "build.sh: building jaeger $JAEGER_VERSION -> $JAEGER_BIN" >&2
  start=$SECONDS
  (
    cd "$HERE/go-wrapper"
    # -mod=readonly: the committed go.mod/go.sum are used as they are.
    CGO_ENABLED=0 GOFLAGS=-mod=readonly GOTOOLCHAIN=local \
      "${NICE[@]}" go build -trimpath -ldflags "-s -w" -o "$tmp" github.com/jaegertracing/jaeger/cmd/jaeger
  )
  mv -f "$tmp" "$JAEGER_BIN"
  trap - EXIT
  echo "build.sh: built $JAEGER_BIN in $((SECONDS - start))s" >&2
fi
echo "JAEGER=$JAEGER_BIN"
