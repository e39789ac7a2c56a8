{{/* The release's full name, at most 63 characters (a DNS label). */}}
{{- define "gitfleet.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* The labels every object carries. */}}
{{- define "gitfleet.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "gitfleet.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* The labels that select the controller's pods. */}}
{{- define "gitfleet.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "gitfleet.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "gitfleet.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* An environment variable from one key of the credentials Secret, left unset when the key is absent. */}}
{{- define "gitfleet.secretEnv" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ .secret }}
      key: {{ .key }}
      optional: true
{{- end -}}

{{/*
The host names the controller's HTTP endpoint answers to, space-separated: the Service by each name
cluster DNS gives it, localhost (kubectl port-forward), the Ingress host and http.allowedHosts.
*/}}
{{- define "gitfleet.allowedHosts" -}}
{{- $service := include "gitfleet.fullname" . -}}
{{- $namespace := .Release.Namespace -}}
{{- $names := list $service (printf "%s.%s" $service $namespace) (printf "%s.%s.svc" $service $namespace) (printf "%s.%s.svc.%s" $service $namespace .Values.clusterDomain) "localhost" -}}
{{- if and .Values.ingress.enabled .Values.ingress.host -}}
{{- $names = append $names .Values.ingress.host -}}
{{- end -}}
{{- range .Values.http.allowedHosts -}}
{{- $names = append $names . -}}
{{- end -}}
{{- $names | uniq | join " " -}}
{{- end -}}
