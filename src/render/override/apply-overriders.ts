import {
  isJsonMap as isMap,
  type Json,
  type JsonMap,
  ownValue,
  setOwn,
  valueAt,
} from "../../apimachinery/json.js";
import { applyJsonPatch } from "../../apimachinery/patch/json-patch.js";
import type { MapSchema } from "../../apimachinery/patch/patch-schema.js";
import { applyStrategicMergePatch, type PatchResult } from "../../apimachinery/patch/strategic-merge.js";
import type { CommandArgsOverrider, MetadataMapOverrider, Overriders } from "../../model/types.js";
import { changeImage, type ImageChange } from "./image-overrider.js";

/** What the overriders need to know about the object they change. */
export interface OverrideTarget {
  readonly object: Json;
  /** Where the object's pod spec lives (built-in kinds, or a ResourceInterpreter's podTemplatePath). */
  readonly podSpecPath: readonly string[] | undefined;
  /** The strategic merge patch schema of the kind; undefined for custom resources. */
  readonly schema: MapSchema | undefined;
}

/**
 * Applies one rule's overriders to an object, in the fixed order image → command → args → labels →
 * annotations → jsonPatch → mergePatch (Karmada's order, with its plaintext patch as jsonPatch and
 * the strategic merge patch last). The first failure stops the rule and says which overrider failed.
 */
export function applyOverriders(target: OverrideTarget, overriders: Overriders): PatchResult {
  const steps: [string, (object: JsonMap) => PatchResult][] = [
    ...(overriders.imageOverrider ?? []).map((c, i): [string, (o: JsonMap) => PatchResult] => [
      `imageOverrider[${i}]`,
      (o) => overrideImage(o, c, target.podSpecPath),
    ]),
    ...(overriders.commandOverrider ?? []).map((c, i): [string, (o: JsonMap) => PatchResult] => [
      `commandOverrider[${i}]`,
      (o) => overrideList(o, "command", c, target.podSpecPath),
    ]),
    ...(overriders.argsOverrider ?? []).map((c, i): [string, (o: JsonMap) => PatchResult] => [
      `argsOverrider[${i}]`,
      (o) => overrideList(o, "args", c, target.podSpecPath),
    ]),
    ...(overriders.labelsOverrider ?? []).map((c, i): [string, (o: JsonMap) => PatchResult] => [
      `labelsOverrider[${i}]`,
      (o) => overrideMetadata(o, "labels", c),
    ]),
    ...(overriders.annotationsOverrider ?? []).map((c, i): [string, (o: JsonMap) => PatchResult] => [
      `annotationsOverrider[${i}]`,
      (o) => overrideMetadata(o, "annotations", c),
    ]),
  ];
  if (overriders.jsonPatch) {
    const operations = overriders.jsonPatch;
    steps.push(["jsonPatch", (o) => applyJsonPatch(o, operations)]);
  }
  if (overriders.mergePatch) {
    const patch = overriders.mergePatch as Json;
    steps.push(["mergePatch", (o) => applyStrategicMergePatch(o, patch, target.schema)]);
  }
  let object = isMap(target.object) ? structuredClone(target.object) : {};
  for (const [name, step] of steps) {
    const result = step(object);
    if (!result.ok) return { ok: false, error: `${name}: ${result.error}` };
    object = isMap(result.value) ? result.value : {};
  }
  return { ok: true, value: object };
}

// Images of the pod spec's containers (not init containers, as Karmada), or the one at predicate.path.
function overrideImage(
  object: JsonMap,
  change: ImageChange,
  podSpecPath: readonly string[] | undefined,
): PatchResult {
  const targets = change.predicate
    ? [pointerSegments(change.predicate.path)]
    : containerPaths(object, podSpecPath).map((p) => [...p, "image"]);
  for (const path of targets) {
    const image = valueAt(object, path);
    if (typeof image !== "string") {
      if (change.predicate) return { ok: false, error: `no image (a string) at ${change.predicate.path}` };
      continue;
    }
    const changed = changeImage(image, change);
    if ("error" in changed) return { ok: false, error: changed.error };
    setAt(object, path, changed.image);
  }
  return { ok: true, value: object };
}

function overrideList(
  object: JsonMap,
  field: "command" | "args",
  change: CommandArgsOverrider,
  podSpecPath: readonly string[] | undefined,
): PatchResult {
  for (const path of containerPaths(object, podSpecPath)) {
    const container = valueAt(object, path);
    if (!isMap(container) || container.name !== change.containerName) continue;
    const listed = ownValue(container, field);
    const current = Array.isArray(listed) ? listed : [];
    container[field] =
      change.operator === "add"
        ? [...current, ...change.value]
        : current.filter((item) => !change.value.includes(String(item)));
  }
  return { ok: true, value: object };
}

function overrideMetadata(
  object: JsonMap,
  field: "labels" | "annotations",
  change: MetadataMapOverrider,
): PatchResult {
  const written = ownValue(object, "metadata");
  const metadata = isMap(written) ? written : {};
  object.metadata = metadata;
  const current = ownValue(metadata, field);
  const map = isMap(current) ? current : {};
  for (const [key, value] of Object.entries(change.value)) {
    if (change.operator === "add") setOwn(map, key, value);
    else if (Object.hasOwn(map, key) && change.operator === "replace") setOwn(map, key, value);
    else if (change.operator === "remove") delete map[key];
  }
  if (Object.keys(map).length > 0 || current !== undefined) metadata[field] = map;
  return { ok: true, value: object };
}

function containerPaths(object: JsonMap, podSpecPath: readonly string[] | undefined): (string | number)[][] {
  if (podSpecPath === undefined) return [];
  const containers = valueAt(object, [...podSpecPath, "containers"]);
  return Array.isArray(containers) ? containers.map((_, i) => [...podSpecPath, "containers", i]) : [];
}

function pointerSegments(pointer: string): string[] {
  return pointer
    .slice(1)
    .split("/")
    .map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~"));
}

function setAt(root: JsonMap, path: readonly (string | number)[], value: Json): void {
  const parent = valueAt(root, path.slice(0, -1));
  const last = path.at(-1);
  if (Array.isArray(parent)) parent[Number(last)] = value;
  else if (isMap(parent) && last !== undefined) setOwn(parent, String(last), value);
}
