#!/usr/bin/env bash
# The prometheus-operator CRDs the chart's ServiceMonitor, PodMonitor and PrometheusRule are
# checked against, from the Go module github.com/prometheus-operator/prometheus-operator (its
# zip carries them under example/prometheus-operator-crd/), cached by version (module-files.sh).
#
# Prints one line on stdout, CRDS=<dir> (holding the three CRD files).
set -euo pipefail

# The newest version of the root module the proxy serves here (later tags are
# refused: "This module version is not available").
VERSION=v0.85.0
out="$(bash "$(dirname "$0")/module-files.sh" github.com/prometheus-operator/prometheus-operator "$VERSION" example/prometheus-operator-crd \
  monitoring.coreos.com_servicemonitors.yaml monitoring.coreos.com_podmonitors.yaml monitoring.coreos.com_prometheusrules.yaml)"
echo "CRDS=${out#DIR=}"
