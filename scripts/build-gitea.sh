#!/usr/bin/env bash
# Builds Gitea (code.gitea.io/gitea, the version below) through the Go module proxy into a cache
# directory keyed by version, for the forge tests of the second tier. Gitea's go.mod has replace
# directives, which only the main module may apply, so it is built in its own module directory (the
# module cache's copy, read-only; nothing is written there) with its go.sum, CGO on for SQLite. The
# build has no bindata: the tests point STATIC_ROOT_PATH at the same module directory for its
# templates and translations. A cache that already holds this build is used as it is. Prints the
# binary's path, then the module directory, on its last two lines.
set -euo pipefail
version=v1.26.0
out=${GITFLEET_GITEA_BIN:-$HOME/.cache/gitfleet/gitea-$version}
mkdir -p "$out" && out=$(cd "$out" && pwd)
export GOTOOLCHAIN=local GOWORK=off GOFLAGS=-mod=readonly CGO_ENABLED=1
dir=$(go mod download -json "code.gitea.io/gitea@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$dir" ] || { echo "build-gitea.sh: go mod download gave no directory for gitea $version" >&2; exit 1; }
marker="$out/.built"
want="gitea $version $(go version | cut -d' ' -f3)"
if [ ! -x "$out/gitea" ] || [ ! -f "$marker" ] || [ "$(cat "$marker")" != "$want" ]; then
  start=$(date +%s)
  echo "building gitea $version into $out (a cold build downloads its modules and takes several minutes)" >&2
  (cd "$dir" && go mod download && go build -trimpath -buildvcs=false -tags 'sqlite sqlite_unlock_notify' \
    -ldflags "-s -w -X main.Version=${version#v}" -o "$out/gitea" .)
  echo "$want" > "$marker"
  echo "built in $(( $(date +%s) - start )) s" >&2
fi
echo "$out/gitea"
echo "$dir"
