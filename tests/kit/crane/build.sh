#!/usr/bin/env bash
# Build go-containerregistry's crane from source through the Go module proxy and cache the binary
# outside the repo, keyed by version; a cached binary is not rebuilt (no Go needed then). The
# cluster suite assembles the router image with it and serves a local OCI registry
# (`crane registry serve`) to push the image and the chart to and pull them back from.
#
#   SWITCHYARD_CACHE   cache root (default: $HOME/.cache/switchyard)
#   SWITCHYARD_NICE=1  build under `nice -n 19`
#   SWITCHYARD_FORCE=1 rebuild even when the cached binary exists
#
# Prints one line on stdout, CRANE=<path> (progress goes to stderr).
set -euo pipefail

# Keep in sync with go-wrapper/go.mod (the go.mod decides what is compiled; this names the cache dir).
CRANE_VERSION=v0.22.1

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${SWITCHYARD_CACHE:-$HOME/.cache/switchyard}"
BIN="$CACHE/crane/$CRANE_VERSION/crane"

grep -Eq "^[[:space:]]*(require[[:space:]]+)?github.com/google/go-containerregistry $CRANE_VERSION( |$)" "$HERE/go-wrapper/go.mod" || {
  echo "build.sh: go-wrapper/go.mod does not pin github.com/google/go-containerregistry $CRANE_VERSION; update one of them" >&2
  exit 1
}

# shellcheck source=../go-build.sh
source "$HERE/../go-build.sh"
cached_go_build "crane $CRANE_VERSION" "$BIN" "$HERE/go-wrapper" github.com/google/go-containerregistry/cmd/crane "-X github.com/google/go-containerregistry/cmd/crane/cmd.Version=$CRANE_VERSION"
echo "CRANE=$BIN"
