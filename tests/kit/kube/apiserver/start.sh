#!/usr/bin/env bash
# Start a throwaway etcd + kube-apiserver pair on loopback (no kubelet, no
# controller-manager, no scheduler) for e2e tests.
#
#   start.sh up   [DIR]   build/cache binaries (build.sh), generate PKI, start
#                         etcd and kube-apiserver in the background, wait for
#                         /readyz, write DIR/env (sourceable) and DIR/kubeconfig
#   start.sh down DIR     stop the processes recorded in DIR/env (by pid)
#   start.sh apiserver-stop DIR    stop only kube-apiserver (etcd keeps the data)
#   start.sh apiserver-start DIR   start kube-apiserver again with the same flags
#                                  and port, wait for /readyz, update DIR/env
#
# DIR defaults to a fresh mktemp dir; it is printed as the last line.
# Environment: see build.sh (SWITCHYARD_CACHE, SWITCHYARD_NICE). READY_TIMEOUT
# (seconds, default 120) bounds the wait for /readyz.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

free_port() { # a port nobody listens on right now (loopback only)
  # Below the kernel's ephemeral range (32768+ by default), so an outgoing connection cannot take
  # the port between this check and the bind.
  local p
  for _ in $(seq 1 200); do
    p=$((20000 + RANDOM % 12000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
  done
  echo "start.sh: no free port found" >&2; return 1
}

gen_pki() { # dir
  local d="$1"
  mkdir -p "$d"
  (
    cd "$d"
    # CA
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 \
      -subj "/CN=switchyard-e2e-ca" \
      -addext "basicConstraints=critical,CA:TRUE" \
      -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
    # serving cert for 127.0.0.1 / localhost (+ the in-cluster names, harmless)
    openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr \
      -subj "/CN=kube-apiserver" 2>/dev/null
    printf '%s\n' \
      "basicConstraints=critical,CA:FALSE" \
      "keyUsage=critical,digitalSignature,keyEncipherment" \
      "extendedKeyUsage=serverAuth" \
      "subjectAltName=IP:127.0.0.1,DNS:localhost,IP:10.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc" \
      > apiserver.ext
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
      -out apiserver.crt -days 2 -extfile apiserver.ext 2>/dev/null
    # admin client cert: user switchyard-admin, group system:masters
    openssl req -newkey rsa:2048 -nodes -keyout admin.key -out admin.csr \
      -subj "/O=system:masters/CN=switchyard-admin" 2>/dev/null
    printf '%s\n' \
      "basicConstraints=critical,CA:FALSE" \
      "keyUsage=critical,digitalSignature,keyEncipherment" \
      "extendedKeyUsage=clientAuth" > client.ext
    openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
      -out admin.crt -days 2 -extfile client.ext 2>/dev/null
    # service-account token signing key pair
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out sa.key 2>/dev/null
    openssl pkey -in sa.key -pubout -out sa.pub
    rm -f ./*.csr ./*.ext ca.srl
    chmod 600 ./*.key
  )
}

up() {
  local dir="${1:-}"
  [[ -n "$dir" ]] || dir="$(mktemp -d -t switchyard-apiserver.XXXXXX)"
  mkdir -p "$dir"; dir="$(cd "$dir" && pwd)"
  eval "$("$HERE/build.sh")"   # sets KUBE_APISERVER, ETCD

  gen_pki "$dir/pki"
  local etcd_port peer_port api_port
  etcd_port=$(free_port); peer_port=$(free_port); api_port=$(free_port)

  "$ETCD" \
    --name=e2e \
    --data-dir="$dir/etcd-data" \
    --listen-client-urls="http://127.0.0.1:$etcd_port" \
    --advertise-client-urls="http://127.0.0.1:$etcd_port" \
    --listen-peer-urls="http://127.0.0.1:$peer_port" \
    --initial-advertise-peer-urls="http://127.0.0.1:$peer_port" \
    --initial-cluster="e2e=http://127.0.0.1:$peer_port" \
    --initial-cluster-state=new \
    --unsafe-no-fsync \
    --log-level=warn \
    >"$dir/etcd.log" 2>&1 &
  local etcd_pid=$!

  local start=$SECONDS
  until curl -fsS "http://127.0.0.1:$etcd_port/health" >/dev/null 2>&1; do
    kill -0 "$etcd_pid" 2>/dev/null || { echo "start.sh: etcd exited; see $dir/etcd.log" >&2; tail -20 "$dir/etcd.log" >&2; return 1; }
    (( SECONDS - start < 60 )) || { echo "start.sh: etcd not healthy after 60s" >&2; kill "$etcd_pid"; return 1; }
    sleep 0.2
  done

  local pki="$dir/pki"
  # One flag per line in DIR/apiserver.args, so apiserver-start can run the
  # same command again (same port, same etcd) after apiserver-stop.
  printf '%s\n' \
    "--etcd-servers=http://127.0.0.1:$etcd_port" \
    --bind-address=127.0.0.1 \
    --advertise-address=127.0.0.1 \
    "--secure-port=$api_port" \
    --endpoint-reconciler-type=none \
    --service-cluster-ip-range=10.0.0.0/24 \
    "--tls-cert-file=$pki/apiserver.crt" \
    "--tls-private-key-file=$pki/apiserver.key" \
    "--client-ca-file=$pki/ca.crt" \
    "--service-account-key-file=$pki/sa.pub" \
    "--service-account-signing-key-file=$pki/sa.key" \
    "--service-account-issuer=https://127.0.0.1:$api_port" \
    "--api-audiences=https://127.0.0.1:$api_port" \
    --authorization-mode=Node,RBAC \
    --allow-privileged=true \
    --profiling=false \
    --v=1 >"$dir/apiserver.args"
  echo "$KUBE_APISERVER" >"$dir/apiserver.bin"
  local api_pid
  api_pid=$(launch_apiserver "$dir")

  cat >"$dir/env" <<EOF
ETCD_PID=$etcd_pid
APISERVER_PID=$api_pid
ETCD_URL=http://127.0.0.1:$etcd_port
KUBE_APISERVER_URL=https://127.0.0.1:$api_port
KUBE_CA=$pki/ca.crt
KUBE_ADMIN_CERT=$pki/admin.crt
KUBE_ADMIN_KEY=$pki/admin.key
KUBECONFIG=$dir/kubeconfig
EOF
  cat >"$dir/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: https://127.0.0.1:$api_port
    certificate-authority: $pki/ca.crt
users:
- name: switchyard-admin
  user:
    client-certificate: $pki/admin.crt
    client-key: $pki/admin.key
contexts:
- name: e2e
  context: {cluster: e2e, user: switchyard-admin}
current-context: e2e
EOF

  wait_apiserver "$dir" "$api_pid" || { kill "$api_pid" "$etcd_pid" 2>/dev/null; return 1; }
  echo "$dir"
}

launch_apiserver() { # dir -> prints the pid
  local dir="$1" bin
  bin="$(cat "$dir/apiserver.bin")"
  local args=()
  mapfile -t args <"$dir/apiserver.args"
  "$bin" "${args[@]}" >>"$dir/apiserver.log" 2>&1 &
  echo $!
}

wait_apiserver() { # dir pid
  local dir="$1" api_pid="$2" start=$SECONDS t0
  # shellcheck disable=SC1091
  source "$dir/env"
  t0=$(date +%s.%N)
  until [[ "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$KUBE_CA" \
          --cert "$KUBE_ADMIN_CERT" --key "$KUBE_ADMIN_KEY" \
          "$KUBE_APISERVER_URL/readyz")" == 200 ]]; do
    if ! kill -0 "$api_pid" 2>/dev/null; then
      echo "start.sh: kube-apiserver exited; see $dir/apiserver.log" >&2
      tail -30 "$dir/apiserver.log" >&2; return 1
    fi
    if (( SECONDS - start >= ${READY_TIMEOUT:-120} )); then
      echo "start.sh: kube-apiserver not ready after ${READY_TIMEOUT:-120}s; see $dir/apiserver.log" >&2
      return 1
    fi
    sleep 0.2
  done
  echo "start.sh: kube-apiserver ready in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')s at $KUBE_APISERVER_URL" >&2
}

stop_pid() { # pid: TERM, wait up to 5 s, then KILL
  local pid="$1"
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
}

apiserver_stop() {
  local dir="${1:?usage: start.sh apiserver-stop DIR}"
  # shellcheck disable=SC1091
  source "$dir/env"
  stop_pid "$APISERVER_PID"
}

apiserver_start() {
  local dir="${1:?usage: start.sh apiserver-start DIR}"
  local api_pid
  api_pid=$(launch_apiserver "$dir")
  sed -i "s/^APISERVER_PID=.*/APISERVER_PID=$api_pid/" "$dir/env"
  wait_apiserver "$dir" "$api_pid" || { kill "$api_pid" 2>/dev/null; return 1; }
}

down() {
  local dir="${1:?usage: start.sh down DIR}"
  [[ -f "$dir/env" ]] || { echo "start.sh: no $dir/env" >&2; return 1; }
  # shellcheck disable=SC1091
  source "$dir/env"
  stop_pid "$APISERVER_PID"
  stop_pid "$ETCD_PID"
}

case "${1:-}" in
  up) shift; up "$@" ;;
  down) shift; down "$@" ;;
  apiserver-stop) shift; apiserver_stop "$@" ;;
  apiserver-start) shift; apiserver_start "$@" ;;
  *) echo "usage: $0 up [DIR] | down DIR | apiserver-stop DIR | apiserver-start DIR" >&2; exit 2 ;;
esac
