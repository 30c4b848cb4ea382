{{/* Chart name, truncated to 63 characters (DNS label). */}}
{{- define "switchyard.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name: release-chart, or the release name alone when it already contains
the chart name; truncated to 63 characters because some name fields are DNS
labels.
*/}}
{{- define "switchyard.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* The admin Service's name: the full name plus -admin, within 63 characters. */}}
{{- define "switchyard.adminServiceName" -}}
{{- printf "%s-admin" (include "switchyard.fullname" . | trunc 57 | trimSuffix "-") }}
{{- end }}

{{- define "switchyard.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels on every object. */}}
{{- define "switchyard.labels" -}}
helm.sh/chart: {{ include "switchyard.chart" . }}
{{ include "switchyard.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: switchyard
{{- end }}

{{/* Labels that select the router pods; never change them on upgrade (selectors are immutable). */}}
{{- define "switchyard.selectorLabels" -}}
app.kubernetes.io/name: {{ include "switchyard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "switchyard.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "switchyard.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The image reference: pinned to appVersion unless a tag is given, by digest when one is given. */}}
{{- define "switchyard.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion }}
{{- if eq $tag "latest" }}
{{- fail "image.tag: latest is not allowed; pin a version (the default is the chart's appVersion) or a digest" }}
{{- end }}
{{- if .Values.image.digest }}
{{- printf "%s:%s@%s" .Values.image.repository $tag .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository $tag }}
{{- end }}
{{- end }}

{{/* Where the config file and secret files are mounted. */}}
{{- define "switchyard.configDir" -}}/etc/switchyard{{- end }}
{{- define "switchyard.secretsDir" -}}/var/run/secrets/switchyard{{- end }}

{{/*
The Kubernetes discovery sources in the config, as JSON: a list of
{name, kind, namespace, labelSelector, service}. The namespace defaults to the
release namespace, as the router's defaults to its own.
*/}}
{{- define "switchyard.discoverySources" -}}
{{- $d := .Values.config.discovery | default dict }}
{{- $out := list }}
{{- $mode := $d.mode | default "static" }}
{{- if ne $mode "static" }}
{{- $out = append $out (dict "name" "default" "kind" $mode "namespace" ($d.namespace | default .Release.Namespace) "labelSelector" ($d.labelSelector | default "") "service" ($d.service | default "")) }}
{{- end }}
{{- range $name, $s := ($d.sources | default dict) }}
{{- $out = append $out (dict "name" $name "kind" $s.kind "namespace" ($s.namespace | default $.Release.Namespace) "labelSelector" ($s.labelSelector | default "") "service" ($s.service | default "")) }}
{{- end }}
{{- toJson $out }}
{{- end }}

{{/* Namespace → sorted kinds (pods, endpointslices, inferencepool) the router reads there, as JSON: discovery's, and
the release namespace's endpointslices when it counts its replicas from its own Service. */}}
{{- define "switchyard.watchedNamespaces" -}}
{{- $byNs := dict }}
{{- range $s := include "switchyard.discoverySources" . | fromJsonArray }}
{{- $kinds := get $byNs $s.namespace | default list }}
{{- $_ := set $byNs $s.namespace (append $kinds $s.kind | uniq | sortAlpha) }}
{{- end }}
{{- if eq (include "switchyard.countsReplicas" .) "true" }}
{{- $kinds := get $byNs .Release.Namespace | default list }}
{{- $_ := set $byNs .Release.Namespace (append $kinds "endpointslices" | uniq | sortAlpha) }}
{{- end }}
{{- toJson $byNs }}
{{- end }}

{{/* "true" when the router counts its replicas from its Service's EndpointSlices (config.load.replicasFromService). */}}
{{- define "switchyard.countsReplicas" -}}
{{- $load := (.Values.config | default dict).load | default dict }}
{{- if or .Values.replicaCountFromService $load.replicasFromService }}true{{ else }}false{{ end }}
{{- end }}

{{/* "true" when the router reads the Kubernetes API, for discovery or its replica count (the pod then needs its service-account token). */}}
{{- define "switchyard.needsKubeApi" -}}
{{- if or (gt (len (include "switchyard.discoverySources" . | fromJsonArray)) 0) (eq (include "switchyard.countsReplicas" .) "true") }}true{{ else }}false{{ end }}
{{- end }}

{{/*
The Secret holding the session names' secret (config.sessions.keySecretFile), or
nothing: secrets.sessionKey.existingSecret when set, else, with a Redis
configured and secrets.sessionKey.create, the chart's own <fullname>-session-key
(templates/secret-session-key.yaml). Without Redis nothing is stored, and the
router's derived secret keeps placement consistent.
*/}}
{{- define "switchyard.sessionKeySecret" -}}
{{- $ref := .Values.secrets.sessionKey }}
{{- $redis := .Values.config.redis | default dict }}
{{- if $ref.existingSecret }}{{ $ref.existingSecret }}
{{- else if and $ref.create (or $redis.url $redis.nodes) }}{{ printf "%s-session-key" (include "switchyard.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/*
The key in that Secret: the chart's own Secret always uses session-key.
*/}}
{{- define "switchyard.sessionKeyKey" -}}
{{- if .Values.secrets.sessionKey.existingSecret }}{{ .Values.secrets.sessionKey.key }}{{ else }}session-key{{ end }}
{{- end }}

{{/*
The Secret holding the admin token, or nothing: secrets.adminToken.existingSecret
when set, else with secrets.adminToken.create the chart's own
<fullname>-admin-token (templates/secret-admin-token.yaml).
*/}}
{{- define "switchyard.adminTokenSecret" -}}
{{- $ref := .Values.secrets.adminToken }}
{{- if $ref.existingSecret }}{{ $ref.existingSecret }}
{{- else if $ref.create }}{{ printf "%s-admin-token" (include "switchyard.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/*
The key in that Secret: the chart's own Secret always uses token.
*/}}
{{- define "switchyard.adminTokenKey" -}}
{{- if .Values.secrets.adminToken.existingSecret }}{{ .Values.secrets.adminToken.key }}{{ else }}token{{ end }}
{{- end }}

{{/*
A random value for a Secret the chart creates, kept across `helm upgrade`: the
value the live Secret `.name` holds under `.key` (lookup), else a new one.
`helm template` and GitOps tools render without a cluster, so lookup finds
nothing and every render would make a new value: name an existingSecret there.
Base64, as Secret data is. Call with (dict "ctx" $ "name" NAME "key" KEY).
*/}}
{{- define "switchyard.keptRandom" -}}
{{- $live := lookup "v1" "Secret" .ctx.Release.Namespace .name }}
{{- $data := dig "data" dict ($live | default dict) }}
{{- if hasKey $data .key }}{{ index $data .key }}{{ else }}{{ randAlphaNum 48 | b64enc }}{{ end }}
{{- end }}

{{/*
Secret files to mount, as JSON: a list of {volume, secret, dir, items: [{key, path}]}.
Each Secret is mounted as a directory (never with subPath), so the kubelet
swaps its files in place when the Secret changes: the API keys file is
reloaded by the router without a restart.
*/}}
{{- define "switchyard.secretFiles" -}}
{{- $out := list }}
{{- $base := include "switchyard.secretsDir" . }}
{{- $s := .Values.secrets }}
{{- with $s.upstreamApiKey }}
{{- if .existingSecret }}
{{- $out = append $out (dict "volume" "upstream-api-key" "secret" .existingSecret "dir" (printf "%s/upstream" $base) "items" (list (dict "key" .key "path" "api-key"))) }}
{{- end }}
{{- end }}
{{- with include "switchyard.adminTokenSecret" . }}
{{- $out = append $out (dict "volume" "admin-token" "secret" . "dir" (printf "%s/admin" $base) "items" (list (dict "key" (include "switchyard.adminTokenKey" $) "path" "token"))) }}
{{- end }}
{{- with include "switchyard.sessionKeySecret" . }}
{{- $out = append $out (dict "volume" "session-key" "secret" . "dir" (printf "%s/session-key" $base) "items" (list (dict "key" (include "switchyard.sessionKeyKey" $) "path" "session-key"))) }}
{{- end }}
{{- range $name, $ref := $s.sourceApiKeys }}
{{- $out = append $out (dict "volume" (printf "source-%s-api-key" $name | trunc 63 | trimSuffix "-") "secret" (required (printf "secrets.sourceApiKeys.%s.existingSecret is required" $name) $ref.existingSecret) "dir" (printf "%s/sources/%s" $base $name) "items" (list (dict "key" ($ref.key | default "api-key") "path" "api-key"))) }}
{{- end }}
{{- with $s.redisPassword }}
{{- if .existingSecret }}
{{- $out = append $out (dict "volume" "redis-password" "secret" .existingSecret "dir" (printf "%s/redis" $base) "items" (list (dict "key" .key "path" "password"))) }}
{{- end }}
{{- end }}
{{- with $s.redisSentinelPassword }}
{{- if .existingSecret }}
{{- $out = append $out (dict "volume" "redis-sentinel-password" "secret" .existingSecret "dir" (printf "%s/redis-sentinel" $base) "items" (list (dict "key" .key "path" "password"))) }}
{{- end }}
{{- end }}
{{- with $s.redisTls }}
{{- if .existingSecret }}
{{- if ne (empty .certKey) (empty .keyKey) }}
{{- fail "secrets.redisTls: certKey and keyKey go together (a client certificate needs its key)" }}
{{- end }}
{{- $items := list }}
{{- if .caKey }}{{ $items = append $items (dict "key" .caKey "path" "ca.crt") }}{{ end }}
{{- if .certKey }}{{ $items = concat $items (list (dict "key" .certKey "path" "tls.crt") (dict "key" .keyKey "path" "tls.key")) }}{{ end }}
{{- if not $items }}
{{- fail "secrets.redisTls: name caKey, or certKey and keyKey, of the Secret" }}
{{- end }}
{{- $out = append $out (dict "volume" "redis-tls" "secret" .existingSecret "dir" (printf "%s/redis-tls" $base) "items" $items) }}
{{- end }}
{{- end }}
{{- with $s.apiKeys }}
{{- if .existingSecret }}
{{- $out = append $out (dict "volume" "api-keys" "secret" .existingSecret "dir" (printf "%s/api-keys" $base) "items" (list (dict "key" .key "path" "api-keys.yaml"))) }}
{{- end }}
{{- end }}
{{- with $s.tracingHeaders }}
{{- if .existingSecret }}
{{- $out = append $out (dict "volume" "tracing-headers" "secret" .existingSecret "dir" (printf "%s/tracing" $base) "items" (list (dict "key" .key "path" "headers"))) }}
{{- end }}
{{- end }}
{{- toJson $out }}
{{- end }}

{{/*
The router's configuration as YAML: values.config with what the chart owns
set on top (listen addresses from containerPorts, key and token files from
the mounted Secrets).
*/}}
{{- define "switchyard.config" -}}
{{- $c := deepCopy (.Values.config | default dict) }}
{{- $_ := set $c "listen" (printf "%s:%d" .Values.listenAddress (int .Values.containerPorts.http)) }}
{{- $_ = set $c "adminListen" (printf "%s:%d" .Values.listenAddress (int .Values.containerPorts.admin)) }}
{{- $base := include "switchyard.secretsDir" . }}
{{- if .Values.secrets.upstreamApiKey.existingSecret }}
{{- $up := get $c "upstream" | default dict }}
{{- $_ = set $up "apiKeyFile" (printf "%s/upstream/api-key" $base) }}
{{- $_ = set $c "upstream" $up }}
{{- end }}
{{- if include "switchyard.adminTokenSecret" . }}
{{- $_ = set $c "adminTokenFile" (printf "%s/admin/token" $base) }}
{{- end }}
{{- if include "switchyard.sessionKeySecret" . }}
{{- $sessions := get $c "sessions" | default dict }}
{{- $_ = set $sessions "keySecretFile" (printf "%s/session-key/session-key" $base) }}
{{- $_ = set $c "sessions" $sessions }}
{{- end }}
{{- range $name, $ref := .Values.secrets.sourceApiKeys }}
{{- $file := printf "%s/sources/%s/api-key" $base $name }}
{{- $d := get $c "discovery" | default dict }}
{{- if eq $name "default" }}
{{- $_ = set $d "apiKeyFile" $file }}
{{- else if eq $name "static" }}
{{- $st := get $d "static" | default dict }}
{{- $_ = set $st "apiKeyFile" $file }}
{{- $_ = set $d "static" $st }}
{{- else }}
{{- $sources := get $d "sources" | default dict }}
{{- if not (hasKey $sources $name) }}
{{- fail (printf "secrets.sourceApiKeys.%s: there is no config.discovery.sources.%s (use default or static for the router's own sources)" $name $name) }}
{{- end }}
{{- $_ = set (get $sources $name) "apiKeyFile" $file }}
{{- end }}
{{- $_ = set $c "discovery" $d }}
{{- end }}
{{- if .Values.secrets.tracingHeaders.existingSecret }}
{{- $tr := get $c "tracing" | default dict }}
{{- $_ = set $tr "headersFile" (printf "%s/tracing/headers" $base) }}
{{- $_ = set $c "tracing" $tr }}
{{- end }}
{{- /* An InferencePool names its endpoint picker by Service: this release's Service is switchyard's name there. */}}
{{- $dis := get $c "discovery" | default dict }}
{{- $pools := false }}
{{- range $s := include "switchyard.discoverySources" . | fromJsonArray }}{{ if eq $s.kind "inferencepool" }}{{ $pools = true }}{{ end }}{{ end }}
{{- if and $pools (not (hasKey $dis "endpointPickerService")) }}
{{- $_ = set $dis "endpointPickerService" (include "switchyard.fullname" .) }}
{{- $_ = set $c "discovery" $dis }}
{{- end }}
{{- include "switchyard.sharedStateConfig" (dict "config" $c "secrets" .Values.secrets "base" $base) }}
{{- /* Under an HPA the replica count (load.replicas) is maxReplicas: a ceiling that holds while the
HPA scales, so a replica's share admits less, never more. A fixed replicaCount is not copied in:
scaling would then roll every pod (the config checksum), and a `kubectl scale` would leave the
count wrong on the side of admitting more. */}}
{{- $load := get $c "load" | default dict }}
{{- if and .Values.autoscaling.enabled (not (hasKey $load "replicas")) }}
{{- $_ = set $load "replicas" (max 1 (int .Values.autoscaling.maxReplicas)) }}
{{- end }}
{{- /* Counted from the chart's own Service, which follows every scale step: the count above holds
until the first list. */}}
{{- if and .Values.replicaCountFromService (not (hasKey $load "replicasFromService")) }}
{{- $_ = set $load "replicasFromService" (include "switchyard.fullname" .) }}
{{- end }}
{{- if $load }}
{{- $_ = set $c "load" $load }}
{{- end }}
{{- toYaml $c }}
{{- end }}

{{/*
Sets, in the config dict passed as .config, the files of the Redis and API-key
Secrets (.secrets) mounted under .base: redis.passwordFile,
redis.sentinelPasswordFile, redis.tls.*, auth.apiKeysFile. Prints nothing.
A Redis Secret without a Redis to use it for, and API keys together with
upstream.forwardClientAuthorization (a start-up error in the router), fail
here, at install time.
*/}}
{{- define "switchyard.sharedStateConfig" -}}
{{- $c := .config }}
{{- $s := .secrets }}
{{- $redis := get $c "redis" | default dict }}
{{- $redisSecrets := list }}
{{- if $s.redisPassword.existingSecret }}
{{- $_ := set $redis "passwordFile" (printf "%s/redis/password" .base) }}
{{- $redisSecrets = append $redisSecrets "redisPassword" }}
{{- end }}
{{- if $s.redisSentinelPassword.existingSecret }}
{{- $_ := set $redis "sentinelPasswordFile" (printf "%s/redis-sentinel/password" .base) }}
{{- $redisSecrets = append $redisSecrets "redisSentinelPassword" }}
{{- end }}
{{- if $s.redisTls.existingSecret }}
{{- $tls := get $redis "tls" | default dict }}
{{- $_ := set $tls "enabled" true }}
{{- if $s.redisTls.caKey }}{{ $_ = set $tls "caFile" (printf "%s/redis-tls/ca.crt" .base) }}{{ end }}
{{- if $s.redisTls.certKey }}
{{- $_ = set $tls "certFile" (printf "%s/redis-tls/tls.crt" .base) }}
{{- $_ = set $tls "keyFile" (printf "%s/redis-tls/tls.key" .base) }}
{{- end }}
{{- $_ = set $redis "tls" $tls }}
{{- $redisSecrets = append $redisSecrets "redisTls" }}
{{- end }}
{{- if $redisSecrets }}
{{- if not (or $redis.url $redis.nodes) }}
{{- fail (printf "secrets.%s is set but config.redis names no Redis (url, or nodes in sentinel or cluster mode)" (first $redisSecrets)) }}
{{- end }}
{{- $_ := set $c "redis" $redis }}
{{- end }}
{{- if $s.apiKeys.existingSecret }}
{{- $up := get $c "upstream" | default dict }}
{{- if and (hasKey $up "forwardClientAuthorization") (eq (toString $up.forwardClientAuthorization) "true") }}
{{- fail "secrets.apiKeys: API-key authentication consumes the client's Authorization header; it cannot also be forwarded (config.upstream.forwardClientAuthorization: true)" }}
{{- end }}
{{- $auth := get $c "auth" | default dict }}
{{- $_ := set $auth "apiKeysFile" (printf "%s/api-keys/api-keys.yaml" .base) }}
{{- $_ = set $c "auth" $auth }}
{{- end }}
{{- end }}

{{/*
terminationGracePeriodSeconds: the router keeps serving for
lifecycle.preStopDelayMs after SIGTERM, then drains for up to drainTimeoutMs;
the kubelet must not SIGKILL it before both ran, so the grace period is their
sum (rounded up to seconds) plus a margin. Unset values take the router's
defaults (10000 and 15000 ms, router/config/schema.ts; a test pins them).
*/}}
{{- define "switchyard.terminationGracePeriodSeconds" -}}
{{- $lc := .Values.config.lifecycle | default dict }}
{{- $pre := 10000 }}
{{- if hasKey $lc "preStopDelayMs" }}{{ $pre = $lc.preStopDelayMs }}{{ end }}
{{- $drain := 15000 }}
{{- if hasKey $lc "drainTimeoutMs" }}{{ $drain = $lc.drainTimeoutMs }}{{ end }}
{{- add (div (add (int64 $pre) (int64 $drain) 999) 1000) (int64 .Values.terminationGraceMarginSeconds) }}
{{- end }}

{{/* Replicas that can run at once at most: more than one needs a PodDisruptionBudget. */}}
{{- define "switchyard.maxReplicas" -}}
{{- if .Values.autoscaling.enabled }}{{ .Values.autoscaling.maxReplicas }}{{ else }}{{ .Values.replicaCount }}{{ end }}
{{- end }}

{{/*
The router container's volume mounts (the config-check init container takes the same):
the config, /tmp, the Secrets' key files, and extraVolumeMounts.
*/}}
{{- define "switchyard.routerVolumeMounts" -}}
- name: config
  mountPath: {{ include "switchyard.configDir" . }}
  readOnly: true
- name: tmp
  mountPath: /tmp
{{- /* Whole directories, never subPath: the kubelet then swaps a changed Secret's files in place. */}}
{{- range (include "switchyard.secretFiles" . | fromJsonArray) }}
- name: {{ .volume }}
  mountPath: {{ .dir }}
  readOnly: true
{{- end }}
{{- with .Values.extraVolumeMounts }}
{{ toYaml . }}
{{- end }}
{{- end }}
