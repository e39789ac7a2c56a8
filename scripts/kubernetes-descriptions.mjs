#!/usr/bin/env node
// Generates schema/kubernetes/descriptions-v<minor>.json: the field descriptions of the built-in kinds
// a simulated member serves, for `kubectl explain` against it. The source is the pinned release's
// own api/openapi-spec/v3/ (k8s.io/kubernetes@<release> from the Go module proxy, via
// `go mod download`): per definition, its description ("") and each property's. Run with no
// arguments to regenerate:
//   node scripts/kubernetes-descriptions.mjs [output file]
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const RELEASE = "v1.36.3";

/** The group-versions whose documents are read (what a simulated member serves). */
const DOCUMENTS = [
  "api__v1",
  "apis__apps__v1",
  "apis__batch__v1",
  "apis__autoscaling__v2",
  "apis__rbac.authorization.k8s.io__v1",
  "apis__networking.k8s.io__v1",
  "apis__policy__v1",
  "apis__coordination.k8s.io__v1",
  "apis__apiextensions.k8s.io__v1",
  "apis__scheduling.k8s.io__v1",
  "apis__certificates.k8s.io__v1",
  "apis__authorization.k8s.io__v1",
  "apis__authentication.k8s.io__v1",
];

const download = JSON.parse(
  execFileSync("go", ["mod", "download", "-json", `k8s.io/kubernetes@${RELEASE}`], {
    encoding: "utf8",
    env: { ...process.env, GOFLAGS: "-mod=mod", GOTOOLCHAIN: "local", GOWORK: "off" },
    cwd: dirname(fileURLToPath(import.meta.url)),
    maxBuffer: 2 ** 26,
  }),
);

const definitions = {};
for (const document of DOCUMENTS) {
  const name = `k8s.io/kubernetes@${RELEASE}/api/openapi-spec/v3/${document}_openapi.json`;
  const spec = JSON.parse(
    execFileSync("unzip", ["-p", download.Zip, name], { maxBuffer: 2 ** 28 }).toString(),
  );
  for (const [definition, schema] of Object.entries(spec.components?.schemas ?? {})) {
    const described = {};
    if (schema.description) described[""] = schema.description;
    for (const [property, value] of Object.entries(schema.properties ?? {}))
      if (value.description) described[property] = value.description;
    if (Object.keys(described).length > 0) definitions[definition] = described;
  }
}

const sorted = Object.fromEntries(
  Object.keys(definitions)
    .sort()
    .map((name) => [
      name,
      Object.fromEntries(
        Object.keys(definitions[name])
          .sort()
          .map((k) => [k, definitions[name][k]]),
      ),
    ]),
);
const minor = RELEASE.replace(/^v(\d+\.\d+)\..*$/, "$1");
const target =
  process.argv[2] ??
  join(dirname(fileURLToPath(import.meta.url)), "..", "schema", "kubernetes", `descriptions-v${minor}.json`);
mkdirSync(dirname(target), { recursive: true });
writeFileSync(
  target,
  `${JSON.stringify({ release: RELEASE.slice(1), source: `k8s.io/kubernetes@${RELEASE}/api/openapi-spec/v3`, sum: download.Sum, definitions: sorted })}\n`,
);
process.stdout.write(`${target}: ${Object.keys(sorted).length} definitions\n`);
