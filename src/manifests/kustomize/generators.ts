import { asList, asMap, isJsonMap, type Json, type JsonMap } from "../../apimachinery/json.js";
import { type BuiltObject, freshObject, nameOf, namespaceOf } from "./built-object.js";
import { type FieldPath, fail, type KustomizationContext, readRelative } from "./kustomization-context.js";

// configMapGenerator and secretGenerator, as kustomize runs them: data from env files, then
// literals, then files; keys checked and never repeated; generatorOptions merged under each
// generator's own options; behavior create, merge or replace against the objects already built.
// The content hash joins the name at the very end of the build (see content-hash.ts).

const KEY = /^[-._a-zA-Z0-9]+$/;
const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

interface Options {
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly disableNameSuffixHash: boolean;
  readonly immutable: boolean;
}

/** Runs the kustomization's generators over the objects built so far. */
export function runGenerators(
  objects: BuiltObject[],
  spec: JsonMap,
  context: KustomizationContext,
): BuiltObject[] {
  let built = objects;
  const global = asMap(spec.generatorOptions);
  for (const kind of ["ConfigMap", "Secret"] as const) {
    const field = kind === "ConfigMap" ? "configMapGenerator" : "secretGenerator";
    for (const [index, entry] of asList(spec[field]).entries()) {
      const at = [field, index];
      if (!isJsonMap(entry)) {
        fail(context, at, "a generator must be a mapping");
        continue;
      }
      const generated = generate(kind, entry, options(asMap(entry.options), global), context, at);
      if (generated) built = place(built, generated, String(entry.behavior ?? "create"), context, at);
    }
  }
  return built;
}

function options(local: JsonMap, global: JsonMap): Options {
  const strings = (value: Json | undefined) =>
    Object.fromEntries(Object.entries(asMap(value)).map(([k, v]) => [k, v === null ? "" : String(v)]));
  // As kustomize merges them: the generator's own labels and annotations win over the global ones.
  return {
    labels: { ...strings(global.labels), ...strings(local.labels) },
    annotations: { ...strings(global.annotations), ...strings(local.annotations) },
    disableNameSuffixHash: local.disableNameSuffixHash === true || global.disableNameSuffixHash === true,
    immutable: local.immutable === true || global.immutable === true,
  };
}

function generate(
  kind: "ConfigMap" | "Secret",
  entry: JsonMap,
  opts: Options,
  context: KustomizationContext,
  at: FieldPath,
): BuiltObject | undefined {
  if (typeof entry.name !== "string" || entry.name === "") {
    fail(context, at, `a ${kind} generator needs a name`);
    return undefined;
  }
  const pairs = loadPairs(entry, context, at);
  if (!pairs) return undefined;
  const metadata: JsonMap = { name: entry.name };
  if (typeof entry.namespace === "string" && entry.namespace !== "") metadata.namespace = entry.namespace;
  if (Object.keys(opts.labels).length > 0) metadata.labels = sorted(opts.labels);
  if (Object.keys(opts.annotations).length > 0) metadata.annotations = sorted(opts.annotations);
  const object: JsonMap = { apiVersion: "v1", kind, metadata };
  if (kind === "Secret")
    object.type = typeof entry.type === "string" && entry.type !== "" ? entry.type : "Opaque";
  setData(object, pairs);
  if (opts.immutable) object.immutable = true;
  return freshObject(object, context.source, !opts.disableNameSuffixHash);
}

function sorted(map: Record<string, string>): JsonMap {
  return Object.fromEntries(Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

// A ConfigMap keeps UTF-8 text in data and anything else base64 in binaryData; a Secret has all base64.
function setData(object: JsonMap, pairs: ReadonlyMap<string, Uint8Array>): void {
  const data: JsonMap = {};
  const binary: JsonMap = {};
  for (const key of [...pairs.keys()].sort()) {
    const bytes = pairs.get(key) as Uint8Array;
    const text = utf8(bytes);
    if (object.kind === "Secret") data[key] = base64(bytes);
    else if (text === undefined) binary[key] = base64(bytes);
    else data[key] = text;
  }
  // kustomize gives a Secret its data map even when empty, and a ConfigMap only when it has keys.
  if (Object.keys(data).length > 0 || object.kind === "Secret") object.data = data;
  if (Object.keys(binary).length > 0) object.binaryData = binary;
}

function utf8(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

// Base64 as kustomize writes generated data: an encoding of 70 characters or more is broken into
// lines of 70, each ending in a newline (which changes the content hash too).
function base64(bytes: Uint8Array): string {
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  const encoded = btoa(text);
  if (encoded.length < BASE64_LINE) return encoded;
  let lines = "";
  for (let i = 0; i < encoded.length; i += BASE64_LINE) lines += `${encoded.slice(i, i + BASE64_LINE)}\n`;
  return lines;
}

const BASE64_LINE = 70;

// The key-value pairs of a generator: env files, then literals, then files, as kustomize loads them.
function loadPairs(
  entry: JsonMap,
  context: KustomizationContext,
  at: FieldPath,
): Map<string, Uint8Array> | undefined {
  const pairs = new Map<string, Uint8Array>();
  let ok = true;
  const add = (key: string, value: Uint8Array, where: FieldPath) => {
    if (!KEY.test(key) || key.length > 253) {
      fail(
        context,
        where,
        `${JSON.stringify(key)} is not a valid key (letters, digits, "-", "_" and "." only)`,
      );
      ok = false;
    } else if (pairs.has(key)) {
      fail(context, where, `the key ${JSON.stringify(key)} is repeated`);
      ok = false;
    } else pairs.set(key, value);
  };
  const envs: [Json, FieldPath][] = asList(entry.envs).map((e, i) => [e, ["envs", i]]);
  if (typeof entry.env === "string") envs.unshift([entry.env, ["env"]]);
  for (const [path, where] of envs) ok = envPairs(path, [...at, ...where], context, add) && ok;
  asList(entry.literals).forEach((literal, index) => {
    const where = [...at, "literals", index];
    const parsed = typeof literal === "string" ? parseLiteral(literal) : undefined;
    if (parsed) add(parsed[0], new TextEncoder().encode(parsed[1]), where);
    else {
      fail(context, where, "a literal must be key=value");
      ok = false;
    }
  });
  asList(entry.files).forEach((source, index) => {
    const where = [...at, "files", index];
    const parsed =
      typeof source === "string" ? parseFileSource(source) : "a file source must be a path or key=path";
    if (typeof parsed === "string") {
      fail(context, where, parsed);
      ok = false;
      return;
    }
    const read = readRelative(context, where, parsed.path);
    if (read) add(parsed.key, read.bytes, where);
    else ok = false;
  });
  return ok ? pairs : undefined;
}

function envPairs(
  path: Json,
  at: FieldPath,
  context: KustomizationContext,
  add: (key: string, value: Uint8Array, where: FieldPath) => void,
): boolean {
  if (typeof path !== "string") {
    fail(context, at, "an env file must be a path");
    return false;
  }
  const read = readRelative(context, at, path);
  if (!read) return false;
  const text = utf8(read.bytes);
  if (text === undefined) {
    fail(context, at, `${path} is not UTF-8`);
    return false;
  }
  let ok = true;
  text.split("\n").forEach((raw, index) => {
    const line = (index === 0 ? raw.replace(/^\uFEFF/, "") : raw).replace(/\r$/, "").trimStart();
    if (line === "" || line.startsWith("#")) return;
    const equals = line.indexOf("=");
    const key = equals < 0 ? line : line.slice(0, equals);
    if (!ENV_NAME.test(key)) {
      fail(context, at, `${path} line ${index + 1}: ${JSON.stringify(key)} is not a valid variable name`);
      ok = false;
      return;
    }
    add(key, new TextEncoder().encode(equals < 0 ? "" : line.slice(equals + 1)), at);
  });
  return ok;
}

function parseLiteral(literal: string): [string, string] | undefined {
  const equals = literal.indexOf("=");
  if (equals <= 0) return undefined;
  let value = literal.slice(equals + 1);
  if (value.length >= 2 && value[0] === value[value.length - 1] && (value[0] === '"' || value[0] === "'"))
    value = value.slice(1, -1);
  return [literal.slice(0, equals), value];
}

function parseFileSource(source: string): { key: string; path: string } | string {
  const parts = source.split("=");
  if (parts.length === 1) return { key: source.slice(source.lastIndexOf("/") + 1), path: source };
  if (parts.length > 2) return `${JSON.stringify(source)}: the key or the path contains "="`;
  const [key, path] = parts as [string, string];
  if (key === "") return `${JSON.stringify(source)} has no key before "="`;
  if (path === "") return `${JSON.stringify(source)} has no path after "="`;
  return { key, path };
}

// A generated object joins the others: created, or merged into or replacing the one it names.
function place(
  objects: BuiltObject[],
  generated: BuiltObject,
  behavior: string,
  context: KustomizationContext,
  at: FieldPath,
): BuiltObject[] {
  const name = nameOf(generated.object);
  const namespace = namespaceOf(generated.object) || "default";
  const matches = objects.filter(
    (o) =>
      o.object.kind === generated.object.kind &&
      [{ name: nameOf(o.object), namespace: namespaceOf(o.object) }, ...o.previousIds].some(
        (id) => id.name === name && (id.namespace || "default") === namespace,
      ),
  );
  if (!["create", "merge", "replace"].includes(behavior)) {
    fail(
      context,
      [...at, "behavior"],
      `behavior must be create, merge or replace, not ${JSON.stringify(behavior)}`,
    );
    return objects;
  }
  if (matches.length > 1) {
    fail(context, at, `more than one ${String(generated.object.kind)} is named ${name}`);
    return objects;
  }
  const old = matches[0];
  if (!old) {
    if (behavior === "create") return [...objects, generated];
    fail(context, at, `there is no ${String(generated.object.kind)} ${name} to ${behavior}`);
    return objects;
  }
  if (behavior === "create") {
    fail(
      context,
      at,
      `${String(generated.object.kind)} ${name} exists already: use behavior merge or replace`,
    );
    return objects;
  }
  return objects.map((o) => (o === old ? combine(old, generated, behavior === "merge") : o));
}

// kustomize's merge and replace: labels and annotations merged, the old name, namespace and
// history kept; merge also keeps the old data under the new. The hash suffix stays only if both had it.
function combine(old: BuiltObject, generated: BuiltObject, mergeData: boolean): BuiltObject {
  const object = structuredClone(generated.object);
  const metadata = asMap(object.metadata);
  const before = asMap(old.object.metadata);
  const merged = (key: string) => ({ ...asMap(before[key]), ...asMap(metadata[key]) });
  for (const key of ["labels", "annotations"]) {
    if (Object.keys(merged(key)).length > 0) metadata[key] = merged(key);
  }
  metadata.name = before.name ?? null;
  if (typeof before.namespace === "string") metadata.namespace = before.namespace;
  else delete metadata.namespace;
  if (mergeData)
    for (const key of ["data", "binaryData"]) {
      const data = { ...asMap(old.object[key]), ...asMap(object[key]) };
      // kustomize drops a merged map that ends up empty.
      if (Object.keys(data).length > 0) object[key] = data;
      else delete object[key];
    }
  object.metadata = metadata;
  const { hashSuffix: _drop, ...rest } = old;
  return { ...rest, object, ...(old.hashSuffix && generated.hashSuffix ? { hashSuffix: true } : {}) };
}
