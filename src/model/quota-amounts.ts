import { asList, asMap, valueAt } from "../apimachinery/json.js";
import { parseQuantity } from "../apimachinery/quantity.js";
import type { QuotaList } from "./quota-types.js";

// What a pod counts against a quota, in milli-units (Kubernetes compares quota in milli-units
// rounded up): a pod's effective requests and limits as Kubernetes' quota evaluator sums them — the
// larger of the containers' sum and the largest init container, per resource, plus pod overhead. Pure.

/** A quota's amounts in milli-units, by resource name ("requests.cpu", "pods"). */
export type QuotaAmounts = ReadonlyMap<string, number>;

/** A quantity in milli-units (rounded up), or undefined when it is not a quantity. */
export function milliOf(value: string | number): number | undefined {
  const parsed = parseQuantity(String(value));
  return parsed === undefined ? undefined : Math.round(parsed * 1000);
}

/** A quota's list in milli-units; entries that are not quantities are left out (validation reports them). */
export function quotaAmounts(list: QuotaList): Map<string, number> {
  const out = new Map<string, number>();
  for (const [resource, value] of Object.entries(list)) {
    const milli = milliOf(value);
    if (milli !== undefined) out.set(resource, milli);
  }
  return out;
}

/** What one pod of the template counts against each of `resources` (pods: 1; others their request or limit). */
export function podAmounts(podTemplate: unknown, resources: Iterable<string>): Map<string, number> {
  const spec = asMap(valueAt(podTemplate, ["spec"]));
  const requests = effective(spec, "requests");
  const limits = effective(spec, "limits");
  const out = new Map<string, number>();
  for (const resource of resources) {
    if (resource === "pods") out.set(resource, 1000);
    else if (resource.startsWith("limits.")) out.set(resource, limits.get(resource.slice(7)) ?? 0);
    else {
      const name = resource.startsWith("requests.") ? resource.slice(9) : resource;
      out.set(resource, requests.get(name) ?? 0);
    }
  }
  return out;
}

/** How many more pods fit in `room`: the least over the resources a pod uses (Infinity when it uses none). */
export function podsThatFit(room: QuotaAmounts, perPod: QuotaAmounts): number {
  let fit = Number.POSITIVE_INFINITY;
  for (const [resource, left] of room) {
    const each = perPod.get(resource) ?? 0;
    if (each > 0) fit = Math.min(fit, Math.max(0, Math.floor(left / each)));
  }
  return fit;
}

/** An amount as a quota writes it: "40", "500m" for cpu, "64Gi" for bytes, "12" for pods. */
export function formatAmount(resource: string, milli: number): string {
  const value = milli / 1000;
  if (resource === "pods" || !Number.isInteger(value))
    return Number.isInteger(value) ? `${value}` : `${milli}m`;
  if (!/memory|storage/.test(resource) || value === 0) return `${value}`;
  for (const [suffix, size] of [
    ["Ti", 2 ** 40],
    ["Gi", 2 ** 30],
    ["Mi", 2 ** 20],
    ["Ki", 2 ** 10],
  ] as const)
    if (value % size === 0) return `${value / size}${suffix}`;
  return `${value}`;
}

// Per resource name, the pod's effective requests or limits in milli-units.
function effective(spec: Record<string, unknown>, field: "requests" | "limits"): Map<string, number> {
  const sum = new Map<string, number>();
  for (const container of asList(valueAt(spec, ["containers"])))
    combine(sum, listOf(container, field), (a, b) => a + b);
  for (const container of asList(valueAt(spec, ["initContainers"])))
    combine(sum, listOf(container, field), Math.max);
  const overhead = asMap(valueAt(spec, ["overhead"]));
  combine(sum, quotaAmounts(overhead as QuotaList), (a, b) => a + b);
  return sum;
}

function listOf(container: unknown, field: "requests" | "limits"): Map<string, number> {
  const list = asMap(valueAt(container, ["resources", field]));
  // A container with limits and no requests requests its limits (Kubernetes defaults them so).
  if (field === "requests") {
    const limits = asMap(valueAt(container, ["resources", "limits"]));
    return quotaAmounts({ ...(limits as QuotaList), ...(list as QuotaList) });
  }
  return quotaAmounts(list as QuotaList);
}

function combine(
  target: Map<string, number>,
  source: ReadonlyMap<string, number>,
  how: (a: number, b: number) => number,
): void {
  for (const [resource, value] of source) target.set(resource, how(target.get(resource) ?? 0, value));
}
