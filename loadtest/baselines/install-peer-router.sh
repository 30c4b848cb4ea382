#!/usr/bin/env bash
# Installs the peer LLM router the benchmark compares switchyard against: the
# vLLM project's router (PyPI `vllm-router`, https://github.com/vllm-project/router,
# a Rust router shipped as a Python wheel with a `vllm-router` launcher). It
# needs neither a GPU nor vllm itself.
#
# The venv is cached per version under
#   ${XDG_CACHE_HOME:-$HOME/.cache}/switchyard/peer-router/vllm-router-<version>/
# so repeated benchmark runs cost nothing and need no network. A `.installed`
# marker is written only after a verified install, so an interrupted run is
# redone from scratch instead of leaving a half-built venv that looks usable.
#
# Prints the path of the `vllm-router` executable on the last line of stdout.
# Exits non-zero with a one-line reason on stderr when it cannot install.
#
# Usage: bash loadtest/baselines/install-peer-router.sh
# Env:   VLLM_ROUTER_VERSION  overrides the pinned version (default below)
set -euo pipefail

# Pinned so that results stay comparable across runs.
VERSION="${VLLM_ROUTER_VERSION:-0.1.17}"
PACKAGE="vllm-router"
ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/switchyard/peer-router"
VENV="$ROOT/$PACKAGE-$VERSION"
EXE="$VENV/bin/vllm-router"
MARKER="$VENV/.installed"

fail() {
  echo "install-peer-router: $*" >&2
  exit 1
}

if [[ -f "$MARKER" && -x "$EXE" ]]; then
  echo "$EXE"
  exit 0
fi

PYTHON="${PYTHON:-python3}"
command -v "$PYTHON" >/dev/null 2>&1 || fail "$PYTHON not found (need Python >= 3.8 with the venv module)"
"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 8) else 1)' ||
  fail "$PACKAGE needs Python >= 3.8, $PYTHON is $("$PYTHON" -V 2>&1)"

mkdir -p "$ROOT"
# Two benchmark runs starting together must not build the same venv at once.
exec 9>"$ROOT/.lock-$PACKAGE-$VERSION"
if command -v flock >/dev/null 2>&1; then flock 9; fi
if [[ -f "$MARKER" && -x "$EXE" ]]; then
  echo "$EXE"
  exit 0
fi

rm -rf "$VENV"
"$PYTHON" -m venv "$VENV" 2>/dev/null ||
  { rm -rf "$VENV"; fail "cannot create a venv with $PYTHON -m venv (Debian: apt-get install python3-venv)"; }

# --only-binary: only manylinux x86_64 wheels are published; without this, pip
# falls back to the sdist, which needs a Rust toolchain and minutes of build.
if ! log="$("$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-input \
  --only-binary "$PACKAGE" "$PACKAGE==$VERSION" 2>&1)"; then
  rm -rf "$VENV"
  fail "pip install $PACKAGE==$VERSION failed: $(printf '%s' "$log" | grep -v '^\s*$' | tail -n 3 | tr '\n' ' ')"
fi

# The launcher only warns when the Rust extension cannot load (e.g. too old a
# glibc), then fails at start; import it now so that failure is reported here.
if ! log="$("$VENV/bin/python" -c 'import vllm_router_rs, vllm_router.router' 2>&1)"; then
  rm -rf "$VENV"
  fail "$PACKAGE==$VERSION installed but its Rust extension does not load: $(printf '%s' "$log" | tail -n 1)"
fi
[[ -x "$EXE" ]] || { rm -rf "$VENV"; fail "$PACKAGE==$VERSION installed no vllm-router executable"; }

touch "$MARKER"
echo "$EXE"
