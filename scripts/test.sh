#!/usr/bin/env bash
# `npm test`: checks the machine (scripts/prerequisites.sh, installing Debian packages with apt when
# run as root), builds gitfleet, brings the pinned helm and sops (from PATH at the pinned version, a
# cache, or a build from Go modules), then runs the whole first tier. Arguments go to vitest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/prerequisites.sh test
npm run --silent build
GITFLEET_HELM=$(bash scripts/build-helm.sh | tail -1)
export GITFLEET_HELM
GITFLEET_SOPS=$(bash scripts/build-sops.sh | tail -1)
export GITFLEET_SOPS
exec npx --no-install vitest run "$@"
