#!/usr/bin/env bash
# Builds CoreDNS (main.go: CoreDNS's own server with the bind, file, errors and log plugins, at the version
# go.mod pins) through the Go module proxy, and fetches the CRDs the networking scenario installs in
# the real API servers from the modules that define them: the MCS API's ServiceExport and
# ServiceImport (sigs.k8s.io/mcs-api; the proxy serves v0.5.2, not v0.6.x) and external-dns's
# DNSEndpoint. Everything goes into a cache directory keyed by what it is built from; a cache that
# already holds this build is used as it is. Prints the directory on its last line: coredns, and crds/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
coredns=$(sed -n 's/^require github.com\/coredns\/coredns \(v[0-9.]*\).*$/\1/p' "$here/go.mod" | head -1)
[ -n "$coredns" ] || { echo "build.sh: cannot read coredns's version from go.mod" >&2; exit 1; }
mcs=v0.5.2
externaldns=v0.20.0
out=${GITFLEET_E2E_BIN:-$HOME/.cache/gitfleet-e2e}/coredns-$coredns
want="coredns $coredns mcs-api $mcs external-dns $externaldns $(cat "$here/go.sum" "$here/main.go" | sha256sum | cut -c1-16)"
if [ -x "$out/coredns" ] && [ -f "$out/.built" ] && [ "$(cat "$out/.built")" = "$want" ]; then
  echo "$out"
  exit 0
fi
export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOFLAGS=-mod=readonly
mkdir -p "$out/crds"
start=$(date +%s)
echo "building CoreDNS $coredns into $out" >&2
(cd "$here" && go build -trimpath -buildvcs=false -ldflags="-s -w" -o "$out/coredns" .)
module_dir() { (cd "$here" && GOFLAGS=-mod=mod go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'); }
mcs_dir=$(module_dir "sigs.k8s.io/mcs-api@$mcs")
dns_dir=$(module_dir "sigs.k8s.io/external-dns@$externaldns")
cp "$mcs_dir/config/crd/multicluster.x-k8s.io_serviceexports.yaml" "$mcs_dir/config/crd/multicluster.x-k8s.io_serviceimports.yaml" "$out/crds/"
cp "$dns_dir/config/crd/standard/dnsendpoints.externaldns.k8s.io.yaml" "$out/crds/"
chmod u+w "$out/crds/"*
echo "$want" > "$out/.built"
echo "built in $(( $(date +%s) - start )) s" >&2
echo "$out"
