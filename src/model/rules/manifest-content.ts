import { valueAt } from "../../apimachinery/json.js";
import { groupKind, podSpecPath } from "../../apimachinery/kinds.js";
import { matchesLabelSelector } from "../../apimachinery/label-selector.js";
import { isQuantity, parseQuantity } from "../../apimachinery/quantity.js";
import { indexInterpreters } from "../interpreter-index.js";
import { isRecord } from "../read-gitfleet-object.js";
import { describe } from "../schema-problems.js";
import type { LabelSelector, Resource, ResourceInterpreter } from "../types.js";
import { checkSelector } from "./label-selectors.js";
import { RememberedFindings } from "./remembered-findings.js";
import type { Path, RuleContext } from "./rule.js";

const CONTAINER_LISTS = ["initContainers", "containers"] as const;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const SELECTOR_KINDS = new Set(["apps/Deployment", "apps/StatefulSet", "apps/ReplicaSet", "apps/DaemonSet"]);

/** Checks inside manifests that Kubernetes would reject at apply time, caught here at pull-request time. */
export function checkManifestContent(context: RuleContext): void {
  const interpreterFor = indexInterpreters(context.model);
  for (const resource of context.model.apps.flatMap((app) => app.resources)) {
    const interpreter = interpreterFor(resource);
    // A ResourceInterpreter says where a kind's pod spec is: checked every load (there are few).
    if (interpreter) checkResource(context, resource, interpreter);
    else remembered.check(context, resource, (own) => checkResource(own, resource, undefined));
  }
}

// Per resource (its object and origin): a load reuses the resources of unchanged files.
const remembered = new RememberedFindings("manifest-content");

function checkResource(
  context: RuleContext,
  resource: Resource,
  interpreter: ResourceInterpreter | undefined,
): void {
  const key = groupKind(resource.group, resource.kind);
  const podPath = podSpecPath(key, interpreter);
  if (podPath) checkPodSpec(context, resource, podPath);
  if (key === "/PersistentVolumeClaim") checkQuantities(context, resource, ["spec", "resources", "requests"]);
  if (key === "/Secret") checkSecret(context, resource);
  if (key === "/Secret" || key === "/ConfigMap") checkDataSize(context, resource);
  if (SELECTOR_KINDS.has(key)) checkWorkloadSelector(context, resource);
}

function checkPodSpec(context: RuleContext, resource: Resource, podPath: Path): void {
  const podSpec = valueAt(resource.object, podPath);
  if (!isRecord(podSpec)) return;
  for (const list of CONTAINER_LISTS) {
    const containers = podSpec[list];
    if (!Array.isArray(containers)) continue;
    containers.forEach((container, i) => {
      if (!isRecord(container) || !isRecord(container.resources)) return;
      const base = [...podPath, list, i, "resources"];
      checkQuantities(context, resource, [...base, "requests"]);
      checkQuantities(context, resource, [...base, "limits"]);
      checkRequestsWithinLimits(context, resource, base, container.resources);
    });
  }
}

function checkQuantities(context: RuleContext, resource: Resource, path: Path): void {
  const map = valueAt(resource.object, path);
  if (!isRecord(map)) return;
  for (const [name, value] of Object.entries(map)) {
    const valid =
      (typeof value === "number" && Number.isFinite(value) && value >= 0) ||
      (typeof value === "string" && isQuantity(value));
    if (valid) continue;
    context.reporter.report({
      origin: resource.origin,
      path: [...path, name],
      code: "INVALID_QUANTITY",
      message: `${name}: ${describe(value)} is not a resource quantity; write it like 500m, 2, 1Gi or 512Mi`,
    });
  }
}

function checkRequestsWithinLimits(
  context: RuleContext,
  resource: Resource,
  base: Path,
  resources: Record<string, unknown>,
): void {
  const { requests, limits } = resources;
  if (!isRecord(requests) || !isRecord(limits)) return;
  for (const [name, request] of Object.entries(requests)) {
    const requested = parseQuantity(String(request));
    const limit = limits[name] === undefined ? undefined : parseQuantity(String(limits[name]));
    if (requested === undefined || limit === undefined || requested <= limit) continue;
    context.reporter.report({
      origin: resource.origin,
      path: [...base, "requests", name],
      code: "INVALID_QUANTITY",
      message: `${name} request ${String(request)} exceeds its limit ${String(limits[name])}; Kubernetes rejects this`,
    });
  }
}

// Messages name the key only: a Secret's value must never reach output. A sealed Secret's values
// are ciphertexts until the sync opens them (the member's API server checks what they open to).
function checkSecret(context: RuleContext, resource: Resource): void {
  if (resource.sealed) return;
  for (const field of ["data", "stringData"] as const) {
    for (const [path, message] of secretMapProblems(field, resource.object[field])) {
      context.reporter.report({ origin: resource.origin, path, code: "INVALID_SECRET_DATA", message });
    }
  }
}

/** The API server's limit on a ConfigMap's or Secret's data (k8s.io/kubernetes core.MaxSecretSize). */
const MAX_DATA_BYTES = 2 ** 20;

// A ConfigMap counts keys and values of data and binaryData, a Secret its values (decoded), as the
// API server counts them; past 1 MiB it refuses the object, so it is refused here, before merge.
function checkDataSize(context: RuleContext, resource: Resource): void {
  const secret = resource.kind === "Secret";
  const total =
    mapSize(resource.object.data, { keys: !secret, base64: secret }) +
    mapSize(resource.object.binaryData, { keys: true, base64: true }) +
    (secret ? mapSize(resource.object.stringData, { keys: false, base64: false }) : 0);
  if (total <= MAX_DATA_BYTES) return;
  context.reporter.report({
    origin: resource.origin,
    path: [],
    code: "TOO_LARGE",
    message: `${resource.kind} ${resource.name} holds ${(total / 2 ** 20).toFixed(1)} MiB of data; the API server refuses more than 1 MiB`,
  });
}

// The bytes a data map holds: values (decoded from base64 where they are), and keys when counted.
function mapSize(map: unknown, count: { keys: boolean; base64: boolean }): number {
  if (!isRecord(map)) return 0;
  let total = 0;
  for (const [key, value] of Object.entries(map)) {
    if (typeof value !== "string") continue;
    const bytes = count.base64 ? Math.floor((value.length * 3) / 4) : utf8Length(value);
    total += bytes + (count.keys ? utf8Length(key) : 0);
  }
  return total;
}

function utf8Length(text: string): number {
  return new TextEncoder().encode(text).length;
}

function secretMapProblems(field: "data" | "stringData", map: unknown): [Path, string][] {
  if (map === undefined || map === null) return [];
  if (!isRecord(map)) return [[[field], `${field} must be a mapping of strings`]];
  return Object.entries(map).flatMap(([key, value]): [Path, string][] => {
    const problem = secretValueProblem(field, value);
    return problem ? [[[field, key], `${field}.${key} ${problem}`]] : [];
  });
}

function secretValueProblem(field: "data" | "stringData", value: unknown): string | undefined {
  if (field === "stringData") return typeof value === "string" ? undefined : "must be a string";
  const valid = typeof value === "string" && BASE64.test(value.replace(/\s/g, ""));
  return valid ? undefined : "must be base64-encoded text; put plain text under stringData";
}

function checkWorkloadSelector(context: RuleContext, resource: Resource): void {
  const selector = valueAt(resource.object, ["spec", "selector"]);
  if (!isLabelSelectorShape(selector)) return;
  checkSelector(context, resource.origin, ["spec", "selector"], selector);
  const templateLabels = valueAt(resource.object, ["spec", "template", "metadata", "labels"]);
  const labels = isRecord(templateLabels)
    ? (Object.fromEntries(Object.entries(templateLabels).map(([k, v]) => [k, String(v)])) as Record<
        string,
        string
      >)
    : {};
  if (matchesLabelSelector(selector, labels)) return;
  context.reporter.report({
    origin: resource.origin,
    path: ["spec", "selector"],
    code: "INVALID_SELECTOR",
    message: "spec.selector does not match spec.template.metadata.labels; Kubernetes rejects this",
  });
}

// Only selectors whose shape is sound are checked in depth; a malformed one is left to the API server.
function isLabelSelectorShape(value: unknown): value is LabelSelector {
  if (!isRecord(value)) return false;
  const { matchLabels, matchExpressions } = value;
  const labelsOk =
    matchLabels === undefined ||
    (isRecord(matchLabels) && Object.values(matchLabels).every((v) => typeof v === "string"));
  const expressionsOk =
    matchExpressions === undefined ||
    (Array.isArray(matchExpressions) &&
      matchExpressions.every(
        (e) =>
          isRecord(e) &&
          typeof e.key === "string" &&
          ["In", "NotIn", "Exists", "DoesNotExist"].includes(String(e.operator)) &&
          (e.values === undefined ||
            (Array.isArray(e.values) && e.values.every((v) => typeof v === "string"))),
      ));
  return labelsOk && expressionsOk;
}
