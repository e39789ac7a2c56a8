#!/usr/bin/env bash
# The release steps of gitfleet VERSION, run from a clean checkout of the commit tagged vVERSION:
#   check    package.json, both charts' version and appVersion, and CHANGELOG.md's section agree
#   charts   helm package charts/gitfleet and charts/gitfleet-agent, helm push both to
#            oci://REGISTRY/charts (HELM_PUSH_FLAGS, e.g. --plain-http for a loopback registry)
#   sbom     the image's Node.js dependencies as CycloneDX JSON (npm sbom --omit dev)
#   npm      npm pack: the package npm publish would upload
#   image    docker build and push REGISTRY/gitfleet:VERSION (where a container engine runs)
# Everything goes to dist/release/. Usage: release.sh VERSION REGISTRY [STEP...] (default: all).
# The pinned helm (scripts/build-helm.sh) is used unless GITFLEET_HELM names one.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:?usage: release.sh VERSION REGISTRY [check|charts|sbom|npm|image]...}
registry=${2:?usage: release.sh VERSION REGISTRY [check|charts|sbom|npm|image]...}
shift 2
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(check charts sbom npm image)
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] || { echo "release: $version is not a semantic version" >&2; exit 64; }
out=dist/release
mkdir -p "$out"
helm=${GITFLEET_HELM:-$(bash scripts/build-helm.sh | tail -1)}

check() {
  local found
  found=$(node -p 'require("./package.json").version')
  [ "$found" = "$version" ] || { echo "release: package.json says $found, not $version" >&2; exit 1; }
  for chart in charts/gitfleet charts/gitfleet-agent; do
    for field in version appVersion; do
      found=$(sed -n "s/^$field: *\"\{0,1\}\([^\"]*\)\"\{0,1\}$/\1/p" "$chart/Chart.yaml")
      [ "$found" = "$version" ] || { echo "release: $chart/Chart.yaml $field is $found, not $version" >&2; exit 1; }
    done
  done
  grep -q "^## \[$version\]" CHANGELOG.md || { echo "release: CHANGELOG.md has no section ## [$version]" >&2; exit 1; }
  echo "release: $version agrees in package.json, both charts and CHANGELOG.md"
}

charts() {
  "$helm" lint --strict charts/gitfleet --set repo.url=https://git.example.com/fleet.git >/dev/null
  "$helm" lint --strict charts/gitfleet-agent --set repo.url=https://git.example.com/fleet.git --set cluster=release >/dev/null
  for chart in charts/gitfleet charts/gitfleet-agent; do
    "$helm" package "$chart" --destination "$out" >/dev/null
    # shellcheck disable=SC2086 # the flags are words
    "$helm" push "$out/$(basename "$chart")-$version.tgz" "oci://$registry/charts" ${HELM_PUSH_FLAGS:-}
  done
}

# The tree the image holds (npm ci, then only production dependencies), described as it is installed:
# npm sbom --omit dev on the full tree drops packages that production needs too.
sbom() {
  local tree
  tree=$(mktemp -d)
  cp package.json package-lock.json "$tree/"
  (cd "$tree" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund >/dev/null \
    && node -e 'const fs = require("fs"); const p = JSON.parse(fs.readFileSync("package.json")); delete p.devDependencies; fs.writeFileSync("package.json", JSON.stringify(p))' \
    && npm sbom --sbom-format cyclonedx --sbom-type application) > "$out/gitfleet-$version.cdx.json"
  rm -rf "$tree"
  echo "release: $out/gitfleet-$version.cdx.json"
}

npm_pack() {
  npm pack --pack-destination "$out" >/dev/null
  echo "release: $out/gitfleet-$version.tgz"
}

image() {
  if ! command -v docker >/dev/null; then
    echo "release: no container engine here: build and push with"
    echo "  docker build -t $registry/gitfleet:$version . && docker push $registry/gitfleet:$version"
    return
  fi
  docker build -t "$registry/gitfleet:$version" .
  docker push "$registry/gitfleet:$version"
}

for step in "${steps[@]}"; do
  case "$step" in
    check) check ;;
    charts) charts ;;
    sbom) sbom ;;
    npm) npm_pack ;;
    image) image ;;
    *) echo "release: no step $step" >&2; exit 64 ;;
  esac
done
