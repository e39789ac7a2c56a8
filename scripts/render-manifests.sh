#!/usr/bin/env bash
# Renders the Helm chart (charts/gitfleet) into plain manifests for `kubectl apply` users:
# deploy/gitfleet.yaml, the chart's defaults in the namespace gitfleet-system, with the Namespace
# first. A test renders it again and compares byte for byte, so the file never drifts from the chart.
# Usage: bash scripts/render-manifests.sh [helm binary] [output]
#   (defaults: the helm scripts/build-helm.sh builds; deploy/gitfleet.yaml)
set -euo pipefail
cd "$(dirname "$0")/.."
helm=${1:-$(bash scripts/build-helm.sh | tail -1)}
out=${2:-deploy/gitfleet.yaml}
{
  cat <<'HEADER'
# gitfleet for `kubectl apply -f deploy/gitfleet.yaml`: the Helm chart in charts/gitfleet rendered
# with its defaults (scripts/render-manifests.sh; do not edit by hand). Before applying, set the
# fleet repository's URL in the Deployment's --repo argument and create the Secret
# gitfleet-credentials (see the README's Install section).
---
apiVersion: v1
kind: Namespace
metadata:
  name: gitfleet-system
HEADER
  "$helm" template gitfleet charts/gitfleet --namespace gitfleet-system \
    --set repo.url=https://git.example.com/platform/fleet.git
} > "$out"
echo "$out"
