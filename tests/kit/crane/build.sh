#!/usr/bin/env bash
# Build go-containerregistry's crane from source through the Go module proxy and cache the binary
# outside the repo, keyed by version; a cached binary is not rebuilt (no Go needed then). The
# cluster suite assembles the router image with it and serves a local OCI registry
# (`crane registry serve`) to push the image and the chart to and pull them back from.
# Prints CRANE=<path>; environment as in ../go-build.sh.
set -euo pipefail

# Keep in sync with go-wrapper/go.mod (the go.mod decides what is compiled; this names the cache dir).
CRANE_VERSION=v0.22.1

# shellcheck source=../go-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/../go-build.sh"
cached_go_tool crane "$CRANE_VERSION" github.com/google/go-containerregistry github.com/google/go-containerregistry/cmd/crane "-X github.com/google/go-containerregistry/cmd/crane/cmd.Version=$CRANE_VERSION"
