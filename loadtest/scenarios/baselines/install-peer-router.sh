#!/usr/bin/env bash
# Installs a peer LLM router the benchmarks compare switchyard against, as a
# Rust router shipped in a Python wheel; neither needs a GPU nor an engine
# package:
#   vllm-router  the vLLM project's router (https://github.com/vllm-project/router)
#   smg          SGLang's model gateway (Shepherd Model Gateway, lightseekorg/smg)
#
# The venv is cached per package and version under
#   ${XDG_CACHE_HOME:-$HOME/.cache}/switchyard/peer-router/<package>-<version>/
# so repeated benchmark runs cost nothing and need no network. A `.installed`
# marker is written only after a verified install, so an interrupted run is
# redone from scratch instead of leaving a half-built venv that looks usable.
#
# Prints the path of the router executable on the last line of stdout.
# Exits non-zero with a one-line reason on stderr when it cannot install.
#
# Usage: bash loadtest/scenarios/baselines/install-peer-router.sh [vllm-router | smg]
# Env:   VLLM_ROUTER_VERSION, SMG_VERSION  override the pinned versions (below)
set -euo pipefail

fail() {
  echo "install-peer-router: $*" >&2
  exit 1
}

PACKAGE="${1:-vllm-router}"
# Versions pinned so that results stay comparable across runs. IMPORTS loads
# the Rust extension, so a wheel that installs but cannot load fails here.
case "$PACKAGE" in
  vllm-router)
    VERSION="${VLLM_ROUTER_VERSION:-0.1.17}"
    IMPORTS='import vllm_router_rs, vllm_router.router'
    ;;
  smg)
    VERSION="${SMG_VERSION:-1.13.0}"
    IMPORTS='import smg.smg_rs, smg.launch_router'
    ;;
  *) fail "unknown peer router $PACKAGE (vllm-router or smg)" ;;
esac
ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/switchyard/peer-router"
VENV="$ROOT/$PACKAGE-$VERSION"
EXE="$VENV/bin/$PACKAGE"
MARKER="$VENV/.installed"

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
if ! log="$("$VENV/bin/python" -c "$IMPORTS" 2>&1)"; then
  rm -rf "$VENV"
  fail "$PACKAGE==$VERSION installed but its Rust extension does not load: $(printf '%s' "$log" | tail -n 1)"
fi
[[ -x "$EXE" ]] || { rm -rf "$VENV"; fail "$PACKAGE==$VERSION installed no $PACKAGE executable"; }

touch "$MARKER"
echo "$EXE"
