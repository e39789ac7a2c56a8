#!/usr/bin/env bash
# `npm run test:seeds`: the property tests beyond the one recorded seed `npm test` runs them on.
#   1. Every seed that once found a defect (test/property-seeds.json "found") is replayed on its test
#      file: a fixed defect must stay fixed, so a failure here fails the run. A seed whose
#      counterexample is kept as a named case ("case") is not: `npm test` runs that case every time.
#   2. Every test file with a property runs once more on a fresh seed of its own. What that finds is
#      printed with its seed and path, to fix and then record in "found"; it does not fail the run,
#      so new random draws never decide whether CI is green.
set -euo pipefail
cd "$(dirname "$0")/.."
export GITFLEET_HELM=${GITFLEET_HELM:-$(bash scripts/build-helm.sh | tail -1)}
node -e '
  const { found } = JSON.parse(require("fs").readFileSync("test/property-seeds.json", "utf8"));
  for (const f of found) if (!f.case) console.log(`${f.seed} ${f.file}`);
' | while read -r seed file; do
  echo "property-seeds: replaying seed $seed on $file"
  GITFLEET_PROPERTY_SEED=$seed npx --no-install vitest run "$file"
done
mapfile -t files < <(grep -rlE 'fc\.(assert|check)\(' test --include='*.test.ts' | sort)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "property-seeds: ${#files[@]} files with properties, each on a fresh seed"
if GITFLEET_PROPERTY_SEED=new npx --no-install vitest run "${files[@]}" >"$log" 2>&1; then
  grep -E "Test Files|Tests " "$log" || true
  echo "property-seeds: fresh seeds found nothing"
else
  cat "$log"
  echo "property-seeds: a fresh seed found a counterexample (its seed and path are above): fix it, keep" \
    "the counterexample as a case, and add the seed to test/property-seeds.json \"found\"" >&2
fi
