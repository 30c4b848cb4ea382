# Sourced by the cached Go tool builds of the test kit (actionlint, crane, helm, jaeger build.sh):
# builds one program from a committed tool module through the Go module proxy, once, into a cache
# outside the repo keyed by version. Honours SWITCHYARD_CACHE (cache root, default
# $HOME/.cache/switchyard), SWITCHYARD_NICE=1 (build under `nice -n 19`) and SWITCHYARD_FORCE=1
# (rebuild even when the cached binary exists); progress goes to stderr.
#
#   cached_go_tool TOOL VERSION MODULE PACKAGE [LDFLAGS]
#
# The calling script's go-wrapper/go.mod (with its go.sum) decides what is compiled, used as it is
# (-mod=readonly fails a stale go.mod instead of rewriting it); it must require MODULE at VERSION,
# which names the cache directory, $SWITCHYARD_CACHE/TOOL/VERSION/TOOL. PACKAGE is the main
# package; LDFLAGS go after `-s -w`. Prints one line on stdout, <TOOL in capitals>=<binary path>,
# so callers can `eval "$(tests/kit/TOOL/build.sh)"`.
cached_go_tool() {
  local tool="$1" version="$2" module="$3" package="$4" ldflags="${5:-}"
  local module_dir bin
  module_dir="$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)/go-wrapper"
  bin="${SWITCHYARD_CACHE:-$HOME/.cache/switchyard}/$tool/$version/$tool"
  grep -Eq "^[[:space:]]*(require[[:space:]]+)?$module $version( |$)" "$module_dir/go.mod" || {
    echo "build.sh: go-wrapper/go.mod does not pin $module $version; update one of them" >&2
    return 1
  }
  cached_go_build "$tool $version" "$bin" "$module_dir" "$package" "$ldflags" || return 1
  echo "${tool^^}=$bin"
}

# Builds PACKAGE of MODULE_DIR into BIN unless it is cached there (see cached_go_tool).
cached_go_build() {
  local name="$1" bin="$2" module_dir="$3" package="$4" ldflags="${5:-}"
  if [[ -x "$bin" && "${SWITCHYARD_FORCE:-0}" != "1" ]]; then
    echo "build.sh: cached $bin" >&2
    return 0
  fi
  if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then PATH="/usr/local/go/bin:$PATH"; fi
  command -v go >/dev/null || { echo "build.sh: go not found on PATH (needed to build $name)" >&2; return 1; }
  local nice=()
  if [[ "${SWITCHYARD_NICE:-0}" == "1" ]]; then nice=(nice -n 19); fi
  mkdir -p "$(dirname "$bin")"
  local tmp="$bin.tmp.$$" start=$SECONDS
  echo "build.sh: building $name -> $bin" >&2
  if ! (cd "$module_dir" && CGO_ENABLED=0 GOFLAGS=-mod=readonly GOTOOLCHAIN=local "${nice[@]}" go build -trimpath -ldflags "-s -w $ldflags" -o "$tmp" "$package"); then
    rm -f "$tmp"
    return 1
  fi
  mv -f "$tmp" "$bin"
  echo "build.sh: built $bin in $((SECONDS - start))s" >&2
}
