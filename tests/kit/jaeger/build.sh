#!/usr/bin/env bash
# Build Jaeger's all-in-one (the `jaeger` binary of Jaeger v2) from source through the Go module
# proxy and cache it outside the repo, keyed by version: the trace backend of the tracing suite
# (its OTLP receiver takes the router's spans, its query API gives them back). Idempotent: a cached
# binary is not rebuilt (no Go needed then). No release tarball can be downloaded here.
# Prints JAEGER=<path>; environment as in ../go-build.sh.
set -euo pipefail

# Keep in sync with go-wrapper/go.mod (the go.mod decides what is compiled; this names the cache dir).
JAEGER_VERSION=v1.75.0

# shellcheck source=../go-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/../go-build.sh"
cached_go_tool jaeger "$JAEGER_VERSION" github.com/jaegertracing/jaeger github.com/jaegertracing/jaeger/cmd/jaeger
