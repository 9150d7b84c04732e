{{/* The chart name, overridable. */}}
{{- define "vmcp.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The full name: release-chart, unless the release name already contains the chart name. */}}
{{- define "vmcp.fullname" -}}
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

{{- define "vmcp.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "vmcp.labels" -}}
helm.sh/chart: {{ include "vmcp.chart" . }}
{{ include "vmcp.selectorLabels" . }}
app.kubernetes.io/version: {{ (.Values.image.tag | default .Chart.AppVersion) | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "vmcp.selectorLabels" -}}
app.kubernetes.io/name: {{ include "vmcp.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: gateway
{{- end }}

{{- define "vmcp.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "vmcp.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "vmcp.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{/* The in-chart Redis: its name (also its Service's DNS name) and labels. */}}
{{- define "vmcp.redis.fullname" -}}
{{- printf "%s-redis" (include "vmcp.fullname" . | trunc 57 | trimSuffix "-") }}
{{- end }}

{{- define "vmcp.redis.selectorLabels" -}}
app.kubernetes.io/name: {{ include "vmcp.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: session-store
{{- end }}

{{- define "vmcp.redis.labels" -}}
helm.sh/chart: {{ include "vmcp.chart" . }}
{{ include "vmcp.redis.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.redis.image.tag | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
The vmcp config file: .Values.config, plus
- name: the release's full name when not set;
- sessionStorage pointing at the in-chart Redis when redis.enabled and the user set none.
*/}}
{{- define "vmcp.config" -}}
{{- $cfg := deepCopy (.Values.config | default dict) }}
{{- if not (hasKey $cfg "name") }}
{{- $_ := set $cfg "name" (include "vmcp.fullname" .) }}
{{- end }}
{{- if and .Values.redis.enabled (not (hasKey $cfg "sessionStorage")) }}
{{- $address := printf "%s:%d" (include "vmcp.redis.fullname" .) (int .Values.redis.service.port) }}
{{- $_ := set $cfg "sessionStorage" (dict "provider" "redis" "address" $address) }}
{{- end }}
{{- toYaml $cfg }}
{{- end }}

{{/* Whether the rendered config stores sessions in Redis. */}}
{{- define "vmcp.sessionsShared" -}}
{{- $cfg := .Values.config | default dict }}
{{- if hasKey $cfg "sessionStorage" }}
{{- if eq (toString (get (get $cfg "sessionStorage" | default dict) "provider")) "redis" }}true{{ end }}
{{- else if .Values.redis.enabled }}true
{{- end }}
{{- end }}
