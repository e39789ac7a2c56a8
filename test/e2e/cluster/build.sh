#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager, kube-scheduler (from the k8s.io/kubernetes module)
# and etcd, etcdctl and etcdutl (from go.etcd.io/etcd/{server,etcdctl,etcdutl}/v3) through the Go module proxy, inside our wrapper modules,
# into a cache directory keyed by version. A cache that already holds this version's binaries is
# used as it is. Prints the directory on its last line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# K8S_DIR=k8s-previous builds the release upgrades start from (its own wrapper module).
wrapper=${K8S_DIR:-k8s}
# ETCD_DIR=etcd-previous with ETCD_ONLY=1 builds only etcd, etcdctl and etcdutl of the etcd release
# upgrades start from, into a directory of their own.
etcd_wrapper=${ETCD_DIR:-etcd}
k8s=$(sed -n 's/^[[:space:]]*k8s.io\/kubernetes \(v[0-9.]*\).*$/\1/p' "$here/$wrapper/go.mod" | head -1)
etcd=$(sed -n 's/^[[:space:]]*go.etcd.io\/etcd\/server\/v3 \(v[0-9.]*\).*$/\1/p' "$here/$etcd_wrapper/go.mod" | head -1)
[ -n "$k8s" ] && [ -n "$etcd" ] || { echo "build.sh: cannot read the versions from the wrapper go.mod files" >&2; exit 1; }
export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOFLAGS=-mod=readonly
if [ "${ETCD_ONLY:-}" = 1 ]; then
  out=${GITFLEET_E2E_ETCD_BIN:-$HOME/.cache/gitfleet-e2e/etcd-$etcd}
  marker="$out/.built"
  want="etcd $etcd $(sha256sum < "$here/$etcd_wrapper/go.sum" | cut -c1-16)"
  if [ ! -f "$marker" ] || [ "$(cat "$marker")" != "$want" ]; then
    mkdir -p "$out"
    echo "building etcd, etcdctl and etcdutl $etcd into $out" >&2
    (cd "$here/$etcd_wrapper" && go build -trimpath -buildvcs=false -ldflags="-s -w" -o "$out/etcd" go.etcd.io/etcd/server/v3)
    (cd "$here/$etcd_wrapper" && go build -trimpath -buildvcs=false -ldflags="-s -w" -o "$out/" go.etcd.io/etcd/etcdctl/v3 go.etcd.io/etcd/etcdutl/v3)
    "$out/etcd" --version | head -1 >&2
    echo "$want" > "$marker"
  fi
  echo "$out"
  exit 0
fi
out=${GITFLEET_E2E_BIN:-$HOME/.cache/gitfleet-e2e/kubernetes-$k8s-etcd-$etcd}
marker="$out/.built"
want="kubernetes $k8s etcd $etcd $(cat "$here/$wrapper/go.sum" "$here/$etcd_wrapper/go.sum" | sha256sum | cut -c1-16)"
if [ -f "$marker" ] && [ "$(cat "$marker")" = "$want" ]; then
  echo "$out"
  exit 0
fi
mkdir -p "$out"
minor=$(echo "$k8s" | cut -d. -f2)
ldflags="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags="$ldflags -X $p.gitVersion=$k8s -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done
start=$(date +%s)
echo "building etcd $etcd into $out" >&2
(cd "$here/$etcd_wrapper" && go build -trimpath -buildvcs=false -ldflags="-s -w" -o "$out/etcd" go.etcd.io/etcd/server/v3)
# etcdctl takes the scheduled snapshots of hosted etcds; etcdutl reads them back in the test.
(cd "$here/$etcd_wrapper" && go build -trimpath -buildvcs=false -ldflags="-s -w" -o "$out/" go.etcd.io/etcd/etcdctl/v3 go.etcd.io/etcd/etcdutl/v3)
echo "building kube-apiserver, kube-controller-manager, kube-scheduler $k8s (a cold build takes a while)" >&2
(cd "$here/$wrapper" && go build -trimpath -buildvcs=false -tags=selinux,notest,grpcnotrace -ldflags="$ldflags" -o "$out/" \
  k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler)
"$out/kube-apiserver" --version >&2
"$out/etcd" --version | head -1 >&2
echo "$want" > "$marker"
echo "built in $(( $(date +%s) - start )) s" >&2
echo "$out"
