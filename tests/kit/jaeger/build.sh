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

# shellcheck source=../go-build.sh
source "$HERE/../go-build.sh"
cached_go_build "jaeger $JAEGER_VERSION" "$JAEGER_BIN" "$HERE/go-wrapper" github.com/jaegertracing/jaeger/cmd/jaeger
echo "JAEGER=$JAEGER_BIN"
