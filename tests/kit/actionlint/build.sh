#!/usr/bin/env bash
# Build actionlint (the GitHub Actions workflow linter) from source through the Go module proxy
# and cache the binary outside the repo, keyed by version; a cached binary is not rebuilt (no Go
# needed then). It checks .github/workflows/ in the chart suite (tests/chart/release.chart.ts).
# Prints ACTIONLINT=<path>; environment as in ../go-build.sh.
set -euo pipefail

# Keep in sync with go-wrapper/go.mod (the go.mod decides what is compiled; this names the cache dir).
ACTIONLINT_VERSION=v1.7.12

# shellcheck source=../go-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/../go-build.sh"
cached_go_tool actionlint "$ACTIONLINT_VERSION" github.com/rhysd/actionlint github.com/rhysd/actionlint/cmd/actionlint "-X github.com/rhysd/actionlint.version=$ACTIONLINT_VERSION"
