#!/usr/bin/env bash
# Builds the tests' S3-compatible store (tools/s3-store/main.go: gofakes3 as rclone ships it behind
# `rclone serve s3`, at the version tools/s3-store/go.mod pins, requiring Signature Version 4) through
# the Go module proxy into a cache directory keyed by version, go.sum and main.go. gitfleet itself
# never runs it. A cache that already holds this build is used as it is. Prints the binary's path on
# its last line.
set -euo pipefail
here=$(cd "$(dirname "$0")/../tools/s3-store" && pwd)
version=$(sed -n 's/^require github.com\/rclone\/gofakes3 \(v[0-9.]*\).*$/\1/p' "$here/go.mod" | head -1)
[ -n "$version" ] || { echo "build-s3-store.sh: cannot read gofakes3's version from tools/s3-store/go.mod" >&2; exit 1; }
out=${GITFLEET_S3_STORE_BIN:-$HOME/.cache/gitfleet/s3-store-$version}
mkdir -p "$out" && out=$(cd "$out" && pwd)
marker="$out/.built"
want="gofakes3 $version $(cat "$here/go.sum" "$here/main.go" | sha256sum | cut -c1-16)"
if [ -x "$out/s3-store" ] && [ -f "$marker" ] && [ "$(cat "$marker")" = "$want" ]; then
  echo "$out/s3-store"
  exit 0
fi
export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOFLAGS=-mod=readonly
start=$(date +%s)
echo "building the S3 store (gofakes3 $version) into $out" >&2
(cd "$here" && go build -trimpath -buildvcs=false -ldflags="-s -w" -o "$out/s3-store" .)
echo "$want" > "$marker"
echo "built in $(( $(date +%s) - start )) s" >&2
echo "$out/s3-store"
