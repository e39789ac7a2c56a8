#!/usr/bin/env bash
# Runs a command with a pinned Node.js of one major version first on the PATH (scripts/node-binary.sh),
# so `node`, `npx` and every process they start run on it: on-node.sh 24 npx vitest run test/cli.
set -euo pipefail
major=${1:?usage: on-node.sh MAJOR COMMAND...}
shift
binary=$(bash "$(dirname "$0")/node-binary.sh" "$major" | tail -1)
export PATH="$(dirname "$binary"):$PATH"
echo "on-node: $(node --version) ($binary)" >&2
exec "$@"
