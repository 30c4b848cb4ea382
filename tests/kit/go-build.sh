# Sourced by the cached Go builds of the test kit (helm/build.sh, jaeger/build.sh): builds one
# program from a committed tool module through the Go module proxy, once, into a cache outside
# the repo keyed by version. Honours SWITCHYARD_NICE=1 (build under `nice -n 19`) and
# SWITCHYARD_FORCE=1 (rebuild even when the cached binary exists); progress goes to stderr.
#
#   cached_go_build NAME BIN MODULE_DIR PACKAGE [LDFLAGS]
#
# NAME names the build in messages; BIN is the cached binary's path; MODULE_DIR holds the go.mod
# and go.sum that decide what is compiled (used as they are: -mod=readonly fails a stale go.mod
# instead of rewriting it); PACKAGE is the main package; LDFLAGS go after `-s -w`.
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
