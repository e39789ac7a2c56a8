#!/usr/bin/env bash
# Builds helm (helm.sh/helm/v3/cmd/helm, pinned in tools/helm/go.mod) through the Go module proxy into
# a cache directory keyed by version and go.sum, with the ldflags helm's own Makefile sets (version,
# and the Kubernetes version its default capabilities report). A cache that already holds this build
# is used as it is. Prints the binary's path on its last line.
set -euo pipefail
here=$(cd "$(dirname "$0")/../tools/helm" && pwd)
helm=$(sed -n 's/^[[:space:]]*helm.sh\/helm\/v3 \(v[0-9.]*\).*$/\1/p' "$here/go.mod" | head -1)
client=$(sed -n 's/^[[:space:]]*k8s.io\/client-go v0\.\([0-9]*\)\..*$/\1/p' "$here/go.mod" | head -1)
[ -n "$helm" ] && [ -n "$client" ] || { echo "build-helm.sh: cannot read the versions from tools/helm/go.mod" >&2; exit 1; }
out=${GITFLEET_HELM_BIN:-$HOME/.cache/gitfleet/helm-$helm}
# A helm on PATH at the pinned version is used as it is.
if on_path=$(command -v helm) && [ "$("$on_path" version --template '{{.Version}}' 2>/dev/null)" = "$helm" ]; then
  echo "$on_path"
  exit 0
fi
mkdir -p "$out" && out=$(cd "$out" && pwd)
marker="$out/.built"
want="helm $helm $(sha256sum < "$here/go.sum" | cut -c1-16)"
if [ -x "$out/helm" ] && [ -f "$marker" ] && [ "$(cat "$marker")" = "$want" ]; then
  echo "$out/helm"
  exit 0
fi
export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOFLAGS=-mod=readonly
mkdir -p "$out"
v=helm.sh/helm/v3
ldflags="-s -w -X $v/internal/version.version=$helm -X $v/internal/version.gitTreeState=clean"
for p in $v/pkg/lint/rules $v/pkg/chartutil; do
  ldflags="$ldflags -X $p.k8sVersionMajor=1 -X $p.k8sVersionMinor=$client"
done
start=$(date +%s)
echo "building helm $helm into $out (a cold build takes a few minutes)" >&2
(cd "$here" && go build -trimpath -buildvcs=false -ldflags="$ldflags" -o "$out/helm" helm.sh/helm/v3/cmd/helm)
"$out/helm" version --short >&2
echo "$want" > "$marker"
echo "built in $(( $(date +%s) - start )) s" >&2
echo "$out/helm"
