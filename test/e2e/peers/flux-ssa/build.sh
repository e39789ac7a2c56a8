#!/usr/bin/env bash
# Builds the Flux server-side apply harness (main.go: Flux's own github.com/fluxcd/pkg/ssa at the
# version go.mod pins) through the Go module proxy into a cache directory keyed by go.sum and main.go.
# A cache that already holds this build is used as it is. Prints the binary's path on its last line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ssa=$(sed -n 's/^[[:space:]]*github.com\/fluxcd\/pkg\/ssa \(v[0-9.]*\).*$/\1/p;s/^require github.com\/fluxcd\/pkg\/ssa \(v[0-9.]*\).*$/\1/p' "$here/go.mod" | head -1)
[ -n "$ssa" ] || { echo "build.sh: cannot read fluxcd/pkg/ssa's version from go.mod" >&2; exit 1; }
out=${GITFLEET_E2E_BIN:-$HOME/.cache/gitfleet-e2e}/flux-ssa-$ssa
want="ssa $ssa $(cat "$here/go.sum" "$here/main.go" | sha256sum | cut -c1-16)"
if [ -x "$out/flux-ssa" ] && [ -f "$out/.built" ] && [ "$(cat "$out/.built")" = "$want" ]; then
  echo "$out/flux-ssa"
  exit 0
fi
export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOFLAGS=-mod=readonly
mkdir -p "$out"
start=$(date +%s)
echo "building the Flux server-side apply harness (fluxcd/pkg/ssa $ssa) into $out" >&2
(cd "$here" && go build -trimpath -buildvcs=false -ldflags="-s -w" -o "$out/flux-ssa" .)
echo "$want" > "$out/.built"
echo "built in $(( $(date +%s) - start )) s" >&2
echo "$out/flux-ssa"
