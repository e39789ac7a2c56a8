#!/usr/bin/env node
// Generates schema/kubernetes/protobuf-v<minor>.json: the protobuf message definitions of the
// built-in API groups a simulated member serves, from a pinned Kubernetes release — the
// generated.proto files of k8s.io/api and k8s.io/apimachinery at the release's staging tag
// (v0.<minor>.<patch>, from the Go module proxy via `go mod download`), parsed by protobufjs and
// written as its JSON descriptor without comments or options. The module versions and their go.sum
// hashes are recorded in the file. Run with no arguments to regenerate:
//   node scripts/kubernetes-protos.mjs [output file]
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import protobuf from "protobufjs";

const RELEASE = "v1.36.3";
const STAGING = RELEASE.replace(/^v1\./, "v0.");

/** The group-versions whose messages are kept (their files' imports come along). */
const FILES = [
  "k8s.io/api/core/v1/generated.proto",
  "k8s.io/api/apps/v1/generated.proto",
  "k8s.io/api/batch/v1/generated.proto",
  "k8s.io/api/autoscaling/v1/generated.proto",
  "k8s.io/api/autoscaling/v2/generated.proto",
  "k8s.io/api/rbac/v1/generated.proto",
  "k8s.io/api/networking/v1/generated.proto",
  "k8s.io/api/policy/v1/generated.proto",
  "k8s.io/api/coordination/v1/generated.proto",
  "k8s.io/api/authorization/v1/generated.proto",
  "k8s.io/api/authentication/v1/generated.proto",
  "k8s.io/api/certificates/v1/generated.proto",
  "k8s.io/api/events/v1/generated.proto",
  "k8s.io/api/discovery/v1/generated.proto",
  "k8s.io/api/storage/v1/generated.proto",
  "k8s.io/api/scheduling/v1/generated.proto",
  "k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto",
  "k8s.io/apimachinery/pkg/runtime/generated.proto",
];

const modules = {};
for (const module of ["k8s.io/api", "k8s.io/apimachinery"]) {
  const download = JSON.parse(
    execFileSync("go", ["mod", "download", "-json", `${module}@${STAGING}`], {
      encoding: "utf8",
      env: { ...process.env, GOFLAGS: "-mod=mod", GOTOOLCHAIN: "local", GOWORK: "off" },
      cwd: dirname(fileURLToPath(import.meta.url)),
    }),
  );
  modules[module] = { dir: download.Dir, sum: download.Sum };
}

// An import path ("k8s.io/api/core/v1/generated.proto") as a file in the module cache.
function fileOf(path) {
  for (const [module, { dir }] of Object.entries(modules))
    if (path.startsWith(`${module}/`)) return join(dir, path.slice(module.length + 1));
  throw new Error(`${path}: not in k8s.io/api or k8s.io/apimachinery`);
}

const root = new protobuf.Root();
const loaded = new Set();
function load(path) {
  if (loaded.has(path)) return;
  loaded.add(path);
  const parsed = protobuf.parse(readFileSync(fileOf(path), "utf8"), root, {
    keepCase: true,
    alternateCommentMode: false,
  });
  for (const imported of parsed.imports ?? []) load(imported);
}
for (const path of FILES) load(path);
root.resolveAll();

// The descriptor without options (go_package and the like): only what encoding and decoding need.
function strip(value) {
  if (Array.isArray(value)) return value.map(strip);
  if (value === null || typeof value !== "object") return value;
  const out = {};
  for (const key of Object.keys(value).sort()) {
    if (key === "options" || key === "comment") continue;
    out[key] = strip(value[key]);
  }
  return out;
}

/**
 * The Go structs beside each generated.proto, per message: `zeroOmitted`, the fields Go leaves out
 * of JSON when they hold their zero value, and `inlined`, the fields JSON flattens into the parent.
 */
function goFacts() {
  const zero = {};
  const inlined = {};
  const times = {};
  for (const { message, body } of goStructs()) {
    const key = message.fullName.slice(1);
    const omitted = zeroOmittedFields(body).filter((f) => message.fields[f]);
    if (omitted.length > 0) zero[key] = omitted.sort();
    const flat = inlinedFields(body, message);
    if (flat.length > 0) inlined[key] = flat.sort();
    const always = timeFields(body).filter((f) => message.fields[f]);
    if (always.length > 0) times[key] = always.sort();
  }
  return { zeroOmitted: sortedObject(zero), inlined: sortedObject(inlined), zeroTimes: sortedObject(times) };
}

// Time fields that are not pointers: Go writes them whatever they hold (a zero time as an empty message).
function timeFields(body) {
  const fields = [];
  for (const [, goType, tag] of body.matchAll(/^\t\w+\s+(\S+)\s+`([^`]*)`/gm)) {
    const jsonName = (/json:"([^"]*)"/.exec(tag)?.[1] ?? "").split(",")[0];
    if (jsonName && /^(metav1\.)?(Micro)?Time$/.test(goType)) fields.push(jsonName);
  }
  return fields;
}

// Each Go struct that has a message of the same name in its directory's generated.proto.
function* goStructs() {
  for (const path of [...loaded].sort()) {
    const dir = dirname(fileOf(path));
    const pkg = root.lookup(protoPackageOf(path));
    for (const file of readdirSync(dir).filter(isStructSource).sort()) {
      const text = readFileSync(join(dir, file), "utf8");
      for (const [, name, body] of text.matchAll(/^type (\w+) struct \{\n([\s\S]*?)^\}/gm)) {
        const message = pkg?.lookup?.(name);
        if (message instanceof protobuf.Type) yield { message, body };
      }
    }
  }
}

function isStructSource(file) {
  return (
    file.endsWith(".go") &&
    !file.endsWith("_test.go") &&
    !file.startsWith("zz_") &&
    !file.startsWith("generated")
  );
}

// Fields with `omitempty` whose Go type is not a pointer.
function zeroOmittedFields(body) {
  const fields = [];
  for (const [, goType, tag] of body.matchAll(/^\t\w+\s+(\S+)\s+`([^`]*)`/gm)) {
    const [jsonName, ...options] = (/json:"([^"]*)"/.exec(tag)?.[1] ?? "").split(",");
    if (jsonName && options.includes("omitempty") && !goType.startsWith("*")) fields.push(jsonName);
  }
  return fields;
}

// Embedded structs with `json:",inline"`: their proto field, found by its number.
function inlinedFields(body, message) {
  const fields = [];
  for (const [, tag] of body.matchAll(/^\t\*?[\w.]+\s+`([^`]*)`/gm)) {
    if (!/json:",inline"/.test(tag)) continue;
    const id = Number(/protobuf:"\w+,(\d+)/.exec(tag)?.[1]);
    const field = message.fieldsArray.find((f) => f.id === id);
    if (field) fields.push(field.name);
  }
  return fields;
}

function sortedObject(object) {
  return Object.fromEntries(Object.entries(object).sort(([a], [b]) => (a < b ? -1 : 1)));
}

// The proto package a generated.proto declares ("k8s.io.api.core.v1").
function protoPackageOf(path) {
  return /^package ([\w.]+);/m.exec(readFileSync(fileOf(path), "utf8"))?.[1] ?? "";
}

const minor = RELEASE.replace(/^v(\d+\.\d+)\..*$/, "$1");
const target =
  process.argv[2] ??
  join(dirname(fileURLToPath(import.meta.url)), "..", "schema", "kubernetes", `protobuf-v${minor}.json`);
mkdirSync(dirname(target), { recursive: true });
const source = Object.fromEntries(
  Object.entries(modules).map(([module, { sum }]) => [`${module}@${STAGING}`, sum]),
);
writeFileSync(
  target,
  `${JSON.stringify({ release: RELEASE.slice(1), source, files: [...loaded].sort(), ...goFacts(), root: strip(root.toJSON()) })}\n`,
);
process.stdout.write(`${target}: ${loaded.size} files\n`);
