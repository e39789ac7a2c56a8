#!/usr/bin/env bash
# Builds the Karmada oracle (main.go: Karmada's own scheduler, github.com/karmada-io/karmada at the
# version go.mod pins) through the Go module proxy into a cache directory keyed by go.sum. A cache
# that already holds this build is used as it is. Prints the binary's path on its last line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
karmada=$(sed -n 's/^[[:space:]]*require github.com\/karmada-io\/karmada \(v[0-9.]*\).*$/\1/p;s/^[[:space:]]*github.com\/karmada-io\/karmada \(v[0-9.]*\).*$/\1/p' "$here/go.mod" | head -1)
[ -n "$karmada" ] || { echo "build.sh: cannot read Karmada's version from go.mod" >&2; exit 1; }
out=${GITFLEET_E2E_BIN:-$HOME/.cache/gitfleet-e2e}/karmada-oracle-$karmada
want="karmada $karmada $(cat "$here/go.sum" "$here/main.go" | sha256sum | cut -c1-16)"
if [ -x "$out/karmada-oracle" ] && [ -f "$out/.built" ] && [ "$(cat "$out/.built")" = "$want" ]; then
  echo "$out/karmada-oracle"
  exit 0
fi
export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOFLAGS=-mod=readonly
mkdir -p "$out"
start=$(date +%s)
echo "building the Karmada $karmada scheduler oracle into $out (a cold build downloads its modules)" >&2
(cd "$here" && go build -trimpath -buildvcs=false -ldflags="-s -w" -o "$out/karmada-oracle" .)
echo "$want" > "$out/.built"
echo "built in $(( $(date +%s) - start )) s" >&2
echo "$out/karmada-oracle"
