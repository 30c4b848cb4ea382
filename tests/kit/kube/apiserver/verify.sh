#!/usr/bin/env bash
# Smoke-check a kube-apiserver started by `start.sh up DIR` with plain curl:
#   verify.sh DIR
# Prints one "ok"/"FAIL" line per check and "N passed, N failed" at the end;
# exits non-zero if any check failed.
set -uo pipefail
dir="${1:?usage: verify.sh DIR}"
# shellcheck disable=SC1091
source "$dir/env"
command -v jq >/dev/null || { echo "verify.sh: jq required" >&2; exit 2; }

S="$KUBE_APISERVER_URL"
NS=switchyard-e2e
NODE=e2e-node-1
pass=0; fail=0
out="$(mktemp)"; trap 'rm -f "$out"' EXIT

# req AUTH METHOD PATH [BODY [CONTENT-TYPE]] -> sets $code, body in $out
req() {
  local auth="$1" method="$2" path="$3" body="${4:-}" ctype="${5:-application/json}"
  local a=()
  if [[ "$auth" == admin ]]; then a=(--cert "$KUBE_ADMIN_CERT" --key "$KUBE_ADMIN_KEY")
  else a=(-H "Authorization: Bearer $auth"); fi
  if [[ -n "$body" ]]; then a+=(-H "Content-Type: $ctype" --data-binary "$body"); fi
  code=$(curl -sS -o "$out" -w '%{http_code}' --cacert "$KUBE_CA" "${a[@]}" -X "$method" "$S$path")
}
check() { # name expected-code [jq-expr that must print true]
  local name="$1" want="$2" expr="${3:-}" okv=1
  [[ "$code" == "$want" ]] || okv=0
  if (( okv )) && [[ -n "$expr" ]]; then [[ "$(jq -r "$expr" "$out")" == true ]] || okv=0; fi
  if (( okv )); then pass=$((pass+1)); echo "ok   $name ($code)"
  else fail=$((fail+1)); echo "FAIL $name: got $code, want $want${expr:+ and $expr}"; head -c 600 "$out"; echo; fi
}

req admin GET /version; check "GET /version" 200 '.gitVersion | startswith("v1.")'
req admin GET /api/v1/namespaces; check "admin lists namespaces" 200 '[.items[].metadata.name] | index("kube-system") != null'

req admin POST /api/v1/nodes "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"$NODE\",\"labels\":{\"switchyard.dev/e2e\":\"true\"}}}"
check "admin creates Node" 201

req admin POST /api/v1/namespaces "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$NS\"}}"
check "admin creates Namespace" 201

req admin POST "/api/v1/namespaces/$NS/serviceaccounts" '{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"router"}}'
check "admin creates ServiceAccount" 201
req admin POST "/apis/rbac.authorization.k8s.io/v1/namespaces/$NS/roles" \
  '{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"pod-reader"},"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get","list","watch"]}]}'
check "admin creates Role" 201
req admin POST "/apis/rbac.authorization.k8s.io/v1/namespaces/$NS/rolebindings" \
  "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"RoleBinding\",\"metadata\":{\"name\":\"router-pod-reader\"},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"Role\",\"name\":\"pod-reader\"},\"subjects\":[{\"kind\":\"ServiceAccount\",\"name\":\"router\",\"namespace\":\"$NS\"}]}"
check "admin creates RoleBinding" 201

req admin POST "/api/v1/namespaces/$NS/serviceaccounts/router/token" \
  '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"expirationSeconds":3600}}'
check "TokenRequest for SA" 201 '.status.token | length > 100'
TOKEN="$(jq -r .status.token "$out")"

req "$TOKEN" GET "/api/v1/namespaces/$NS/pods"; check "SA token lists pods in $NS" 200 '.kind == "PodList"'
req "$TOKEN" GET "/api/v1/namespaces/$NS/secrets"; check "SA token cannot list secrets" 403 '.reason == "Forbidden"'
req "$TOKEN" GET "/api/v1/namespaces/default/pods"; check "SA token cannot list pods in default" 403

# Pods: the ServiceAccount admission plugin rejects a pod whose service
# account does not exist; nothing (no controller-manager) creates "default",
# so the pod names the SA we made.
POD='{"apiVersion":"v1","kind":"Pod","metadata":{"name":"backend-0","labels":{"app":"backend"}},"spec":{"nodeName":"'$NODE'","serviceAccountName":"router","automountServiceAccountToken":false,"containers":[{"name":"c","image":"example.invalid/backend:1"}]}}'
req admin POST "/api/v1/namespaces/$NS/pods" "$POD"
check "admin creates Pod bound to node" 201 ".spec.nodeName == \"$NODE\""

req admin PATCH "/api/v1/namespaces/$NS/pods/backend-0/status" \
  '{"status":{"phase":"Running","podIP":"127.0.0.5","podIPs":[{"ip":"127.0.0.5"}],"conditions":[{"type":"Ready","status":"True"}]}}' \
  application/strategic-merge-patch+json
check "admin patches pod status" 200 '.status.phase == "Running" and .status.podIP == "127.0.0.5" and (.status.conditions[] | select(.type=="Ready") | .status) == "True"'

req "$TOKEN" GET "/api/v1/namespaces/$NS/pods/backend-0"
check "SA token reads patched pod" 200 '.status.podIP == "127.0.0.5"'

req admin DELETE "/api/v1/namespaces/$NS/pods/backend-0"
check "DELETE pod bound to node (no kubelet)" 200 '.metadata.deletionTimestamp != null'
sleep 1
req admin GET "/api/v1/namespaces/$NS/pods/backend-0"
check "pod stays Terminating (deletionTimestamp set, grace 30s)" 200 '.metadata.deletionTimestamp != null and .metadata.deletionGracePeriodSeconds == 30'

req admin DELETE "/api/v1/namespaces/$NS/pods/backend-0" '{"apiVersion":"v1","kind":"DeleteOptions","gracePeriodSeconds":0}'
check "force delete (gracePeriodSeconds=0)" 200
req admin GET "/api/v1/namespaces/$NS/pods/backend-0"; check "pod gone after force delete" 404

# An unbound pod (no nodeName) is deleted immediately, for contrast.
req admin POST "/api/v1/namespaces/$NS/pods" "${POD/\"nodeName\":\"$NODE\",/}"
check "admin creates unbound Pod" 201
req admin DELETE "/api/v1/namespaces/$NS/pods/backend-0"; check "DELETE unbound pod" 200
req admin GET "/api/v1/namespaces/$NS/pods/backend-0"; check "unbound pod vanishes at once" 404

echo "$pass passed, $fail failed"
(( fail == 0 ))
