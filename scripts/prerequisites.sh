#!/usr/bin/env bash
# What each test command needs from the machine, checked in well under a second before it starts:
# `bash scripts/prerequisites.sh test` (npm test), `e2e` (npm run test:e2e) or `image`
# (scripts/image-check.sh). A Debian package that is missing is installed with apt when this runs as
# root (as CI does); otherwise the script stops at once with the exact command to run. Tools that
# apt does not bring (Node.js, Go, kubectl) are named with where to get them. The one list CI and a
# person's `npm test` share: .ci/run installs nothing beforehand.
set -euo pipefail
target=${1:-test}
packages=()
problems=()
need() { # need <command or path> <Debian package> — why is in the comments below
  if [[ $1 == /* ]]; then [ -x "$1" ] || packages+=("$2"); else command -v "$1" >/dev/null || packages+=("$2"); fi
}

case $target in
  test)
    # Repositories, git http-backend and signed commits (git, ssh-keygen).
    need git git
    need ssh-keygen openssh-client
    # SSH remotes are tested against a real sshd on loopback with git-shell.
    need /usr/sbin/sshd openssh-server
    # The dashboard's browser tests drive Debian's chromium (never a downloaded browser), unless
    # GITFLEET_CHROMIUM names another.
    [ -n "${GITFLEET_CHROMIUM:-}" ] || need chromium chromium
    # Hosted control planes' certificates are checked with openssl.
    need openssl openssl
    # `gitfleet completion` is tested in the shells it serves.
    need zsh zsh
    need fish fish
    # The pinned helm and sops are built from Go modules unless one at the pinned version is on PATH.
    command -v go >/dev/null || problems+=("go 1.26 or newer (https://go.dev/dl/): helm and sops are built from Go modules")
    # The simulated members are checked against kubectl itself (never Debian's kubernetes-client).
    command -v kubectl >/dev/null || problems+=("kubectl 1.32 or newer (https://kubernetes.io/docs/tasks/tools/): the oracle of the simulated members' API")
    ;;
  e2e)
    need git git
    need openssl openssl
    # Children that die with their parent (setpriv --pdeathsig).
    need setpriv util-linux
    # The networking scenario asks the clusterset.local zone with a real resolver.
    need dig dnsutils
    need ssh-keyscan openssh-client
    command -v go >/dev/null || problems+=("go 1.26 or newer (https://go.dev/dl/): kube-apiserver 1.36, etcd, CoreDNS and Gitea are built from Go modules")
    ;;
  image)
    # The image's command runs in a private network namespace (ip); hadolint comes from PyPI into a
    # virtualenv.
    need ip iproute2
    need python3 python3
    python3 -c 'import ensurepip, venv' 2>/dev/null || packages+=(python3-venv)
    ;;
  *)
    echo "prerequisites.sh: unknown target '$target' (test, e2e or image)" >&2
    exit 64
    ;;
esac

node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
[ "$node_major" -ge 20 ] || problems+=("Node.js 20.19 or newer (https://nodejs.org/)")

if [ ${#packages[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "prerequisites ($target): installing ${packages[*]} with apt" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >&2
  else
    problems+=("Debian packages ${packages[*]}: run  sudo apt-get install -y ${packages[*]}")
  fi
fi
if [ ${#problems[@]} -gt 0 ]; then
  echo "prerequisites ($target): this machine lacks what the tests need:" >&2
  printf '  - %s\n' "${problems[@]}" >&2
  exit 69
fi
