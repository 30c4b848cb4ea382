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

{{/* Namespace → sorted kinds (pods, endpointslices) discovery reads there, as JSON. */}}
{{- define "switchyard.watchedNamespaces" -}}
{{- $byNs := dict }}
{{- range $s := include "switchyard.discoverySources" . | fromJsonArray }}
{{- $kinds := get $byNs $s.namespace | default list }}
{{- $_ := set $byNs $s.namespace (append $kinds $s.kind | uniq | sortAlpha) }}
{{- end }}
{{- toJson $byNs }}
{{- end }}

{{/* "true" when discovery reads the Kubernetes API (the pod then needs its service-account token). */}}
{{- define "switchyard.needsKubeApi" -}}
{{- if gt (len (include "switchyard.discoverySources" . | fromJsonArray)) 0 }}true{{ else }}false{{ end }}
{{- end }}

{{/*
Secret files to mount, as JSON: a list of {volume, secret, key, dir, file}.
*/}}
{{- define "switchyard.secretFiles" -}}
{{- $out := list }}
{{- $base := include "switchyard.secretsDir" . }}
{{- with .Values.secrets.upstreamApiKey }}
{{- if .existingSecret }}
{{- $out = append $out (dict "volume" "upstream-api-key" "secret" .existingSecret "key" .key "dir" (printf "%s/upstream" $base) "file" "api-key") }}
{{- end }}
{{- end }}
{{- with .Values.secrets.adminToken }}
{{- if .existingSecret }}
{{- $out = append $out (dict "volume" "admin-token" "secret" .existingSecret "key" .key "dir" (printf "%s/admin" $base) "file" "token") }}
{{- end }}
{{- end }}
{{- range $name, $ref := .Values.secrets.sourceApiKeys }}
{{- $out = append $out (dict "volume" (printf "source-%s-api-key" $name | trunc 63 | trimSuffix "-") "secret" (required (printf "secrets.sourceApiKeys.%s.existingSecret is required" $name) $ref.existingSecret) "key" ($ref.key | default "api-key") "dir" (printf "%s/sources/%s" $base $name) "file" "api-key" "source" $name) }}
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
{{- if .Values.secrets.adminToken.existingSecret }}
{{- $_ = set $c "adminTokenFile" (printf "%s/admin/token" $base) }}
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
{{- toYaml $c }}
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
