#!/usr/bin/env bash
# npm run test:alerts: promtool checks the rule file and runs every fixture here (each alert
# fires in one and stays quiet in another), then the TypeScript checks promtool cannot make
# (annotations, runbook anchors, metric names, the TTFT SLO constants, fixture coverage).
# promtool comes from Debian's `prometheus` package (.ci/run installs it when missing).
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v promtool >/dev/null; then
  echo "promtool not found: apt-get install -y prometheus (Debian), or put promtool on PATH" >&2
  exit 1
fi
promtool --version 2>&1 | head -1
promtool check rules charts/switchyard/alerts/switchyard-rules.yaml
promtool test rules tests/alerts/*.yaml
node --test "tests/alerts/*.alerts.ts"
