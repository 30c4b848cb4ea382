#!/usr/bin/env bash
# Build kube-apiserver and etcd from source through the Go module proxy and
# cache the binaries outside the repo, keyed by version. Idempotent: a binary
# that already exists in the cache is not rebuilt.
#
#   SWITCHYARD_CACHE   cache root (default: $HOME/.cache/switchyard)
#   SWITCHYARD_NICE=1  run the Go builds under `nice -n 19` (developer
#                      machines shared with others; CI should leave it unset)
#   SWITCHYARD_FORCE=1 rebuild even when the cached binary exists
#
# Prints two lines on stdout:  KUBE_APISERVER=<path>  and  ETCD=<path>
# (everything else goes to stderr), so callers can `eval "$(build.sh)"`.
set -euo pipefail

# Pinned versions. Keep in sync with go-wrapper/*/go.mod (the go.mod files are
# the source of truth for what gets compiled; these name the cache dirs and
# are stamped into the binaries' version info).
K8S_VERSION=v1.37.2
ETCD_VERSION=v3.6.16

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${SWITCHYARD_CACHE:-$HOME/.cache/switchyard}"
APISERVER_BIN="$CACHE/k8s/$K8S_VERSION/kube-apiserver"
ETCD_BIN="$CACHE/etcd/$ETCD_VERSION/etcd"

# Go is needed only when something must be built; the cached case works without it.
need_go() {
  if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then PATH="/usr/local/go/bin:$PATH"; fi
  command -v go >/dev/null || { echo "build.sh: go not found on PATH (needed to build $1)" >&2; exit 1; }
}

NICE=()
if [[ "${SWITCHYARD_NICE:-0}" == "1" ]]; then NICE=(nice -n 19); fi

check_pin() { # file, module, version
  grep -Eq "^[[:space:]]*(require[[:space:]]+)?$2 $3( |$)" "$1" || {
    echo "build.sh: $1 does not pin $2 $3; update the go.mod or the variables" >&2
    exit 1
  }
}

# build <out> <wrapper dir> <package> <extra ldflags>
build() {
  local out="$1" dir="$2" pkg="$3" extra="$4"
  if [[ -x "$out" && "${SWITCHYARD_FORCE:-0}" != "1" ]]; then
    echo "build.sh: cached $out" >&2
    return 0
  fi
  need_go "$pkg"
  mkdir -p "$(dirname "$out")"
  local tmp="$out.tmp.$$"
  echo "build.sh: building $pkg -> $out" >&2
  local start=$SECONDS
  (
    cd "$dir"
    # -mod=readonly: the committed go.mod/go.sum are used as they are; a stale
    # go.mod fails the build instead of being rewritten (run `go mod tidy`).
    CGO_ENABLED=0 GOFLAGS=-mod=readonly GOTOOLCHAIN=local \
      "${NICE[@]}" go build -trimpath -ldflags "-s -w $extra" -o "$tmp" "$pkg"
  )
  mv -f "$tmp" "$out"
  echo "build.sh: built $out in $((SECONDS - start))s" >&2
}

check_pin "$HERE/go-wrapper/kube-apiserver/go.mod" k8s.io/kubernetes "$K8S_VERSION"
check_pin "$HERE/go-wrapper/etcd/go.mod" go.etcd.io/etcd/server/v3 "$ETCD_VERSION"

k8s_minor="${K8S_VERSION#v1.}"; k8s_minor="${k8s_minor%%.*}"
kv=k8s.io/component-base/version
cv=k8s.io/client-go/pkg/version
k8s_ldflags="-X $kv.gitVersion=$K8S_VERSION -X $kv.gitMajor=1 -X $kv.gitMinor=$k8s_minor -X $kv.gitTreeState=clean"
k8s_ldflags+=" -X $cv.gitVersion=$K8S_VERSION -X $cv.gitMajor=1 -X $cv.gitMinor=$k8s_minor -X $cv.gitTreeState=clean"

build "$APISERVER_BIN" "$HERE/go-wrapper/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver "$k8s_ldflags"
build "$ETCD_BIN" "$HERE/go-wrapper/etcd" go.etcd.io/etcd/server/v3 ""

echo "KUBE_APISERVER=$APISERVER_BIN"
echo "ETCD=$ETCD_BIN"
