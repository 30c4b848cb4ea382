#!/usr/bin/env bash
# Creates (once) a Python virtual environment for one interoperability client
# from its pinned requirements file and caches it outside the repository,
# keyed by the file's content: a changed pin makes a new environment, an
# unchanged one is reused without touching PyPI.
#
#   venv.sh <requirements.txt>
#   SWITCHYARD_CACHE   cache root (default: $HOME/.cache/switchyard)
#
# Prints one line on stdout, the environment's python path (progress goes to
# stderr), so callers can `py="$(venv.sh clients-requirements.txt)"`.
set -euo pipefail

req="$1"
[[ -f "$req" ]] || { echo "venv.sh: no requirements file $req" >&2; exit 1; }
CACHE="${SWITCHYARD_CACHE:-$HOME/.cache/switchyard}"
key="$(basename "$req" .txt)-$(sha256sum "$req" | cut -c1-16)"
dir="$CACHE/python/$key"

if [[ -x "$dir/bin/python" && -f "$dir/.complete" ]]; then
  echo "venv.sh: cached $dir" >&2
else
  rm -rf "$dir"
  mkdir -p "$(dirname "$dir")"
  start=$SECONDS
  echo "venv.sh: creating $dir" >&2
  python3 -m venv "$dir" >&2
  "$dir/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$req" >&2
  touch "$dir/.complete"
  echo "venv.sh: installed $req in $((SECONDS - start)) s" >&2
fi
echo "$dir/bin/python"
