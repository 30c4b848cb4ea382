#!/usr/bin/env bash
# Fetch the prometheus-operator CRDs the chart's ServiceMonitor, PodMonitor and
# PrometheusRule are checked against, from the Go module
# github.com/prometheus-operator/prometheus-operator (its zip carries them
# under example/prometheus-operator-crd/), through the Go module proxy, and
# cache them outside the repo by version. Cached: no Go needed.
#
#   SWITCHYARD_CACHE  cache root (default: $HOME/.cache/switchyard)
#
# Prints one line on stdout, CRDS=<dir> (holding the three CRD files).
set -euo pipefail

# The newest version of the root module the proxy serves here (later tags are
# refused: "This module version is not available").
VERSION=v0.85.0
MODULE=github.com/prometheus-operator/prometheus-operator
FILES=(monitoring.coreos.com_servicemonitors.yaml monitoring.coreos.com_podmonitors.yaml monitoring.coreos.com_prometheusrules.yaml)

CACHE="${SWITCHYARD_CACHE:-$HOME/.cache/switchyard}"
OUT="$CACHE/prometheus-operator-crds/$VERSION"

cached=1
for f in "${FILES[@]}"; do [[ -s "$OUT/$f" ]] || cached=0; done
if [[ $cached == 1 ]]; then
  echo "prometheus-operator-crds.sh: cached $OUT" >&2
else
  if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then PATH="/usr/local/go/bin:$PATH"; fi
  command -v go >/dev/null || { echo "prometheus-operator-crds.sh: go not found on PATH" >&2; exit 1; }
  # Outside any module, so no go.mod is consulted or written.
  json="$(cd / && GOTOOLCHAIN=local GOFLAGS=-mod=mod go mod download -json "$MODULE@$VERSION")"
  dir="$(printf '%s' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')"
  [[ -n "$dir" && -d "$dir/example/prometheus-operator-crd" ]] || { echo "prometheus-operator-crds.sh: go mod download gave no Dir: $json" >&2; exit 1; }
  mkdir -p "$OUT"
  for f in "${FILES[@]}"; do cp "$dir/example/prometheus-operator-crd/$f" "$OUT/$f.tmp.$$" && mv -f "$OUT/$f.tmp.$$" "$OUT/$f"; done
  echo "prometheus-operator-crds.sh: fetched $MODULE@$VERSION CRDs into $OUT" >&2
fi
echo "CRDS=$OUT"
