#!/usr/bin/env bash
# Build actionlint (the GitHub Actions workflow linter) from source through the Go module proxy
# and cache the binary outside the repo, keyed by version; a cached binary is not rebuilt (no Go
# needed then). It checks .github/workflows/ in the chart suite (tests/chart/release.chart.ts).
#
#   SWITCHYARD_CACHE   cache root (default: $HOME/.cache/switchyard)
#   SWITCHYARD_NICE=1  build under `nice -n 19`
#   SWITCHYARD_FORCE=1 rebuild even when the cached binary exists
#
# Prints one line on stdout, ACTIONLINT=<path> (progress goes to stderr).
set -euo pipefail

# Keep in sync with go-wrapper/go.mod (the go.mod decides what is compiled; this names the cache dir).
ACTIONLINT_VERSION=v1.7.12

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${SWITCHYARD_CACHE:-$HOME/.cache/switchyard}"
BIN="$CACHE/actionlint/$ACTIONLINT_VERSION/actionlint"

grep -Eq "^[[:space:]]*(require[[:space:]]+)?github.com/rhysd/actionlint $ACTIONLINT_VERSION( |$)" "$HERE/go-wrapper/go.mod" || {
  echo "build.sh: go-wrapper/go.mod does not pin github.com/rhysd/actionlint $ACTIONLINT_VERSION; update one of them" >&2
  exit 1
}

# shellcheck source=../go-build.sh
source "$HERE/../go-build.sh"
cached_go_build "actionlint $ACTIONLINT_VERSION" "$BIN" "$HERE/go-wrapper" github.com/rhysd/actionlint/cmd/actionlint "-X github.com/rhysd/actionlint.version=$ACTIONLINT_VERSION"
echo "ACTIONLINT=$BIN"
