{{/* Chart name, truncated to the 63 characters a label value allows. */}}
{{- define "kvbench-operator.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: the release name if it already contains the chart name, else release-chart. */}}
{{- define "kvbench-operator.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "kvbench-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kvbench-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "kvbench-operator.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "kvbench-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kvbench
{{- end }}

{{- define "kvbench-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "kvbench-operator.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* repository@digest when a digest is given, else repository:tag (tag defaults to v<appVersion>). */}}
{{- define "kvbench-operator.imageRef" -}}
{{- if .img.digest }}
{{- printf "%s@%s" .img.repository .img.digest }}
{{- else }}
{{- printf "%s:%s" .img.repository (default (printf "v%s" .appVersion) .img.tag) }}
{{- end }}
{{- end }}

{{- define "kvbench-operator.image" -}}
{{- include "kvbench-operator.imageRef" (dict "img" .Values.image "appVersion" .Chart.AppVersion) }}
{{- end }}

{{- define "kvbench-operator.runnerImage" -}}
{{- include "kvbench-operator.imageRef" (dict "img" .Values.runner "appVersion" .Chart.AppVersion) }}
{{- end }}

{{- define "kvbench-operator.javaRunnerImage" -}}
{{- include "kvbench-operator.imageRef" (dict "img" .Values.javaRunner "appVersion" .Chart.AppVersion) }}
{{- end }}

{{/* True when the cluster serves monitoring.coreos.com/v1 (prometheus-operator CRDs) or the value forces it. */}}
{{- define "kvbench-operator.serviceMonitor.enabled" -}}
{{- $m := .Values.monitoring.serviceMonitor }}
{{- if and $m.enabled (or $m.force (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1/ServiceMonitor")) }}true{{ end }}
{{- end }}
{{- define "kvbench-operator.prometheusRule.enabled" -}}
{{- $m := .Values.monitoring.prometheusRule }}
{{- if and $m.enabled (or $m.force (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1/PrometheusRule")) }}true{{ end }}
{{- end }}
{{- define "kvbench-operator.podMonitor.enabled" -}}
{{- $m := .Values.monitoring.podMonitor }}
{{- if and $m.enabled (or $m.force (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1/PodMonitor")) }}true{{ end }}
{{- end }}
