#!/usr/bin/env bash
# Builds promql (main.go: Prometheus' own PromQL parser, at the version go.mod pins, asked about each
# query of the chart's alerts and dashboard) through the Go module proxy, and fetches the Prometheus
# Operator's PrometheusRule and ServiceMonitor CRDs from the module that defines them, so the chart's
# monitoring objects are validated by a real API server against their real schemas. Everything goes
# into a cache directory keyed by what it is built from; a cache that already holds this build is used
# as it is. Prints the directory on its last line: promql, and crds/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
prometheus=$(sed -n 's/^require github.com\/prometheus\/prometheus \(v[0-9.]*\).*$/\1/p' "$here/go.mod" | head -1)
[ -n "$prometheus" ] || { echo "build.sh: cannot read prometheus's version from go.mod" >&2; exit 1; }
operator=v0.88.0
out=${GITFLEET_E2E_BIN:-$HOME/.cache/gitfleet-e2e}/prometheus-$prometheus
want="prometheus $prometheus prometheus-operator $operator $(cat "$here/go.sum" "$here/main.go" | sha256sum | cut -c1-16)"
if [ -x "$out/promql" ] && [ -f "$out/.built" ] && [ "$(cat "$out/.built")" = "$want" ]; then
  echo "$out"
  exit 0
fi
export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOFLAGS=-mod=readonly
mkdir -p "$out/crds"
start=$(date +%s)
echo "building promql (Prometheus $prometheus) into $out" >&2
(cd "$here" && go build -trimpath -buildvcs=false -ldflags="-s -w" -o "$out/promql" .)
module_dir() { (cd "$here" && GOFLAGS=-mod=mod go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'); }
operator_dir=$(module_dir "github.com/prometheus-operator/prometheus-operator@$operator")
for kind in prometheusrules servicemonitors; do
  cp "$operator_dir/example/prometheus-operator-crd/monitoring.coreos.com_$kind.yaml" "$out/crds/"
done
chmod u+w "$out/crds/"*
echo "$want" > "$out/.built"
echo "built in $(( $(date +%s) - start )) s" >&2
echo "$out"
