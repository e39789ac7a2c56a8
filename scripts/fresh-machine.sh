#!/usr/bin/env bash
# `npm test` as on a fresh machine of this project's kind where only `npm ci` has run: a clean clone,
# an empty HOME (no cached helm, sops, Go modules or npm packages), no helm or sops on the PATH, and
# the Debian packages the test command brings itself removed first (openssh-server, chromium).
# It changes the machine's packages (npm test installs them again), so it runs only where that is
# wanted: as root with GITFLEET_FRESH_MACHINE=yes, on a throwaway machine such as CI's.
set -euo pipefail
if [ "${GITFLEET_FRESH_MACHINE:-}" != yes ] || [ "$(id -u)" != 0 ]; then
  echo "fresh-machine.sh removes Debian packages: run it as root with GITFLEET_FRESH_MACHINE=yes, on a throwaway machine" >&2
  exit 64
fi
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/gitfleet-fresh-XXXXXX)
git clone -q "$src" "$work/repo"
DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq openssh-server chromium >/dev/null
for gone in /usr/sbin/sshd /usr/bin/chromium; do [ ! -e "$gone" ] || { echo "fresh-machine.sh: $gone is still there" >&2; exit 1; }; done
export HOME="$work/home"
mkdir -p "$HOME"
unset GITFLEET_HELM GITFLEET_SOPS GITFLEET_CHROMIUM GOMODCACHE GOCACHE GOPATH XDG_CACHE_HOME
# No helm or sops on the PATH: the test command must build the pinned ones.
path=""
IFS=: read -ra dirs <<<"$PATH"
for dir in "${dirs[@]}"; do
  [ -x "$dir/helm" ] || [ -x "$dir/sops" ] || path="${path:+$path:}$dir"
done
export PATH="$path"
cd "$work/repo"
start=$(date +%s)
npm ci --no-audit --no-fund
npm test
echo "fresh-machine.sh: npm ci && npm test passed in $(( $(date +%s) - start )) s on a fresh HOME (clone in $work/repo)"
