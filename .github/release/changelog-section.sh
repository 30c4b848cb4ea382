#!/usr/bin/env bash
# Prints CHANGELOG.md's section for a version (from "## <version>" to the next "## " heading,
# without the heading); fails when there is none or it has no "### Upgrade notes".
#
#   .github/release/changelog-section.sh 0.2.0
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# RELEASE_ROOT: the checkout to read (tests point it at a copy); default: this one.
cd "${RELEASE_ROOT:-$here/../..}"
version="${1:?usage: changelog-section.sh VERSION}"
section=$(awk -v version="$version" '
  /^## / { if (inside) exit; heading = $0; sub(/^## \[?/, "", heading); sub(/[] ].*$/, "", heading); inside = (heading == version); next }
  inside { print }
' CHANGELOG.md)
[[ -n "${section//[[:space:]]/}" ]] || { echo "changelog-section.sh: CHANGELOG.md has no section '## $version': rename '## Unreleased' in the release commit" >&2; exit 1; }
grep -q '^### Upgrade notes' <<<"$section" || { echo "changelog-section.sh: CHANGELOG.md's section for $version has no '### Upgrade notes' (write 'None.' when there are none)" >&2; exit 1; }
printf '%s\n' "$section"
