{{- define "fanwhy.labels" -}}
app.kubernetes.io/name: fanwhy
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "fanwhy.selector" -}}
app.kubernetes.io/name: fanwhy
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "fanwhy.secret" -}}
{{- if .Values.tokens.existingSecret -}}
{{ .Values.tokens.existingSecret }}
{{- else -}}
{{ .Release.Name }}-fanwhy-tokens
{{- end -}}
{{- end -}}
