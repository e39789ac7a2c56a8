#!/usr/bin/env bash
# Regenerates the wrapper modules' go.mod/go.sum for a Kubernetes and an etcd version. Only our own
# files change: the replace lines pin each k8s.io staging module to the release's published tag,
# read from k8s.io/kubernetes's own go.mod in the module cache. Run it when moving versions; the
# build (build.sh) never changes these files.
set -euo pipefail
K8S=${K8S_VERSION:-v1.36.3}
ETCD=${ETCD_VERSION:-v3.6.16}
# The wrapper directory: k8s for the version the tier runs, k8s-previous for the one upgrades start from.
K8S_DIR=${K8S_DIR:-k8s}
# etcd's: etcd for the release the tier runs; ETCD_DIR=etcd-previous with ETCD_ONLY=1 regenerates the
# release hosted etcds are upgraded from, and nothing else.
ETCD_DIR=${ETCD_DIR:-etcd}
STAGING=v0.${K8S#v1.}
export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOFLAGS=
here=$(cd "$(dirname "$0")" && pwd)

k8s_wrapper() {
  mkdir -p "$here/$K8S_DIR"
  cd "$here/$K8S_DIR"
  rm -f go.mod go.sum
  go mod init gitfleet.e2e/controlplane-k8s >/dev/null 2>&1
  go mod edit -go=1.26.0
  upstream=$(cd "$(mktemp -d)" && go mod download -json "k8s.io/kubernetes@$K8S" |
    sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
  for m in $(sed -n 's#^[[:space:]]*\(k8s\.io/[A-Za-z0-9._-]*\) => \./staging/.*#\1#p' "$upstream"); do
    go mod edit -replace="$m=$m@$STAGING"
  done
  go mod edit -require="k8s.io/kubernetes@$K8S"
  godebug=$(sed -n 's/^godebug default=\(go[0-9.]*\)$/\1/p' "$upstream" | head -1)
  [ -n "$godebug" ] && go mod edit -godebug="default=$godebug"
  for c in kube-apiserver kube-controller-manager kube-scheduler; do
    go mod edit -tool="k8s.io/kubernetes/cmd/$c"
  done
  go mod tidy
}

etcd_wrapper() {
  mkdir -p "$here/$ETCD_DIR"
  cd "$here/$ETCD_DIR"
  rm -f go.mod go.sum
  go mod init "gitfleet.e2e/controlplane-$ETCD_DIR" >/dev/null 2>&1
  go mod edit -go=1.26.0
  go mod edit -require="go.etcd.io/etcd/server/v3@$ETCD" -tool=go.etcd.io/etcd/server/v3
  # etcdctl (the backup CronJob's command) and etcdutl (the test reads snapshots with it).
  for m in etcdctl etcdutl; do go mod edit -require="go.etcd.io/etcd/$m/v3@$ETCD" -tool="go.etcd.io/etcd/$m/v3"; done
  go mod tidy
}

if [ "${ETCD_ONLY:-}" = 1 ]; then
  etcd_wrapper
  echo "wrappers: etcd $ETCD in $ETCD_DIR"
  exit 0
fi
k8s_wrapper
[ "$K8S_DIR" = k8s ] || { echo "wrappers: k8s.io/kubernetes $K8S (staging $STAGING) in $K8S_DIR"; exit 0; }
etcd_wrapper
echo "wrappers: k8s.io/kubernetes $K8S (staging $STAGING), etcd $ETCD"
