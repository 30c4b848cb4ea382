#!/usr/bin/env bash
# Fetch files from a Go module's zip through the Go module proxy (no build) and cache them
# outside the repo by module and version. Cached: no Go needed. The CRDs the chart's objects
# are checked against in the cluster suite come this way.
#
#   module-files.sh MODULE VERSION SUBDIR FILE...
#
#   SWITCHYARD_CACHE  cache root (default: $HOME/.cache/switchyard)
#
# Prints one line on stdout, DIR=<dir> (holding the files); progress goes to stderr.
set -euo pipefail

module="${1:?usage: module-files.sh MODULE VERSION SUBDIR FILE...}"
version="${2:?}"
subdir="${3:?}"
shift 3
(($# > 0)) || { echo "module-files.sh: no files named" >&2; exit 1; }

CACHE="${SWITCHYARD_CACHE:-$HOME/.cache/switchyard}"
OUT="$CACHE/module-files/${module//\//_}/$version"

cached=1
for f in "$@"; do [[ -s "$OUT/$f" ]] || cached=0; done
if [[ $cached == 1 ]]; then
  echo "module-files.sh: cached $OUT" >&2
else
  if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then PATH="/usr/local/go/bin:$PATH"; fi
  command -v go >/dev/null || { echo "module-files.sh: go not found on PATH (needed to fetch $module@$version)" >&2; exit 1; }
  # Outside any module, so no go.mod is consulted or written.
  json="$(cd / && GOTOOLCHAIN=local GOFLAGS=-mod=mod go mod download -json "$module@$version")"
  dir="$(printf '%s' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')"
  [[ -n "$dir" && -d "$dir/$subdir" ]] || { echo "module-files.sh: go mod download gave no $subdir: $json" >&2; exit 1; }
  mkdir -p "$OUT"
  for f in "$@"; do cp "$dir/$subdir/$f" "$OUT/$f.tmp.$$" && mv -f "$OUT/$f.tmp.$$" "$OUT/$f"; done
  echo "module-files.sh: fetched $module@$version $subdir into $OUT" >&2
fi
echo "DIR=$OUT"
