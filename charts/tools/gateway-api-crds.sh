#!/usr/bin/env bash
# The Gateway API CRD the chart's HTTPRoute is checked against, from the Go module
# sigs.k8s.io/gateway-api (standard channel, config/crd/standard/), cached by version
# (module-files.sh).
#
# Prints one line on stdout, CRDS=<dir> (holding the CRD file).
set -euo pipefail

VERSION=v1.4.1
out="$(bash "$(dirname "$0")/module-files.sh" sigs.k8s.io/gateway-api "$VERSION" config/crd/standard gateway.networking.k8s.io_httproutes.yaml)"
echo "CRDS=${out#DIR=}"
