#!/usr/bin/env bash
# Builds sops (github.com/getsops/sops/v3/cmd/sops, pinned in tools/sops/go.mod) through the Go module
# proxy into a cache directory keyed by version and go.sum. The tests use it as the oracle that
# encrypts their fixtures, as an operator's sops would; gitfleet itself never runs it. A cache that
# already holds this build is used as it is. Prints the binary's path on its last line.
set -euo pipefail
here=$(cd "$(dirname "$0")/../tools/sops" && pwd)
sops=$(sed -n 's/^.*github.com\/getsops\/sops\/v3 \(v[0-9.]*\).*$/\1/p' "$here/go.mod" | head -1)
[ -n "$sops" ] || { echo "build-sops.sh: cannot read the version from tools/sops/go.mod" >&2; exit 1; }
out=${GITFLEET_SOPS_BIN:-$HOME/.cache/gitfleet/sops-$sops}
# A sops on PATH at the pinned version is used as it is.
if on_path=$(command -v sops) && [ "$("$on_path" --version --disable-version-check 2>/dev/null | head -1)" = "sops ${sops#v}" ]; then
  echo "$on_path"
  exit 0
fi
mkdir -p "$out" && out=$(cd "$out" && pwd)
marker="$out/.built"
want="sops $sops $(sha256sum < "$here/go.sum" | cut -c1-16)"
if [ -x "$out/sops" ] && [ -f "$marker" ] && [ "$(cat "$marker")" = "$want" ]; then
  echo "$out/sops"
  exit 0
fi
export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOFLAGS=-mod=readonly
start=$(date +%s)
echo "building sops $sops into $out (a cold build takes a few minutes)" >&2
(cd "$here" && go build -trimpath -buildvcs=false -ldflags="-s -w" -o "$out/sops" github.com/getsops/sops/v3/cmd/sops)
echo "$want" > "$marker"
echo "built in $(( $(date +%s) - start )) s" >&2
echo "$out/sops"
