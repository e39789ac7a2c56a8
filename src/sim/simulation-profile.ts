import { parseDocument } from "yaml";
import { asList, asMap, isJsonMap, type Json, type JsonMap } from "../apimachinery/json.js";
import { parseQuantity } from "../apimachinery/quantity.js";
import { type CustomWorkload, DEFAULT_NODE_POOLS, type NodePool } from "./world.js";

/** How big each simulated member is: node pools per cluster, a default, and how fast pods get ready. */
export interface SimulationProfile {
  readonly readyDelayMs: number;
  /** Custom workload kinds whose pods members run. */
  readonly workloads: readonly CustomWorkload[];
  /** Members run their HorizontalPodAutoscalers this often (ms); off when unset. */
  readonly hpaPeriodMs?: number;
  poolsFor(cluster: string): readonly NodePool[];
}

/** The profile without a file: three nodes of 4 CPUs and 16 GiB per cluster, pods ready after 200 ms. */
export const DEFAULT_PROFILE: SimulationProfile = {
  readyDelayMs: 200,
  workloads: [
    {
      group: "apps.kruise.io",
      kind: "CloneSet",
      replicasPath: "spec.replicas",
      podTemplatePath: "spec.template",
      podsToDeletePath: "spec.scaleStrategy.podsToDelete",
    },
  ],
  poolsFor: () => DEFAULT_NODE_POOLS,
};

/**
 * Reads a simulation profile (YAML):
 *
 *     readyDelayMs: 200
 *     hpaPeriodMs: 15000          # members run their HorizontalPodAutoscalers (off when unset)
 *     default:  { nodePools: [ { count: 3, allocatable: { cpu: "8", memory: 32Gi, pods: "110" } } ] }
 *     clusters:
 *       idc-west-1: { nodePools: [ { count: 2, allocatable: { cpu: "16", nvidia.com/gpu: "4" }, taints: [ … ] } ] }
 *
 * Throws with the file, line and column of the first mistake.
 */
export function parseSimulationProfile(text: string, file: string): SimulationProfile {
  const document = parseDocument(text);
  if (document.errors.length > 0) throw new Error(`${file}: ${document.errors[0]?.message}`);
  const root = asMap(document.toJS() as Json);
  const where = (path: (string | number)[]) => {
    const node = document.getIn(path, true) as { range?: [number, number] } | undefined;
    const offset = node?.range?.[0] ?? 0;
    const before = text.slice(0, offset).split("\n");
    return `${file}:${before.length}:${(before.at(-1)?.length ?? 0) + 1}`;
  };
  const pools = (value: Json | undefined, path: (string | number)[]): NodePool[] =>
    asList(asMap(value).nodePools).map((pool, i) => readPool(pool, [...path, "nodePools", i], where));
  const defaults = root.default === undefined ? [...DEFAULT_NODE_POOLS] : pools(root.default, ["default"]);
  const clusters = new Map(
    Object.entries(asMap(root.clusters)).map(([name, spec]) => [name, pools(spec, ["clusters", name])]),
  );
  const readyDelayMs = root.readyDelayMs ?? 200;
  if (typeof readyDelayMs !== "number" || readyDelayMs < 0)
    throw new Error(`${where(["readyDelayMs"])}: readyDelayMs must be a non-negative number`);
  const workloads =
    root.workloads === undefined
      ? DEFAULT_PROFILE.workloads
      : asList(root.workloads).map((w, i) => readWorkload(asMap(w), ["workloads", i], where));
  const hpaPeriodMs = root.hpaPeriodMs;
  if (hpaPeriodMs !== undefined && (typeof hpaPeriodMs !== "number" || hpaPeriodMs <= 0))
    throw new Error(`${where(["hpaPeriodMs"])}: hpaPeriodMs must be a positive number`);
  return {
    readyDelayMs,
    workloads,
    ...(hpaPeriodMs !== undefined ? { hpaPeriodMs } : {}),
    poolsFor: (cluster) => clusters.get(cluster) ?? defaults,
  };
}

function readPool(
  value: Json,
  path: (string | number)[],
  where: (path: (string | number)[]) => string,
): NodePool {
  if (!isJsonMap(value)) throw new Error(`${where(path)}: a node pool must be a mapping`);
  const count = value.count;
  if (typeof count !== "number" || !Number.isInteger(count) || count < 0)
    throw new Error(`${where([...path, "count"])}: count must be a whole number`);
  const allocatable: Record<string, string> = {};
  for (const [name, amount] of Object.entries(asMap(value.allocatable))) {
    if (parseQuantity(String(amount)) === undefined)
      throw new Error(`${where([...path, "allocatable", name])}: "${String(amount)}" is not a quantity`);
    allocatable[name] = String(amount);
  }
  if (Object.keys(allocatable).length === 0)
    throw new Error(`${where(path)}: allocatable is required (cpu, memory, pods)`);
  return {
    count,
    allocatable,
    ...(isJsonMap(value.labels)
      ? { labels: Object.fromEntries(Object.entries(value.labels).map(([k, v]) => [k, String(v)])) }
      : {}),
    ...(Array.isArray(value.taints) ? { taints: value.taints.map((t) => readTaint(asMap(t))) } : {}),
  };
}

function readWorkload(
  value: JsonMap,
  path: (string | number)[],
  where: (path: (string | number)[]) => string,
): CustomWorkload {
  const field = (name: string) => {
    if (typeof value[name] !== "string" || value[name] === "")
      throw new Error(`${where([...path, name])}: ${name} is required`);
    return value[name] as string;
  };
  return {
    group: field("group"),
    kind: field("kind"),
    replicasPath: field("replicasPath"),
    podTemplatePath: field("podTemplatePath"),
    ...(typeof value.podsToDeletePath === "string" && value.podsToDeletePath !== ""
      ? { podsToDeletePath: value.podsToDeletePath }
      : {}),
  };
}

function readTaint(taint: JsonMap): NodePool["taints"] extends readonly (infer T)[] | undefined ? T : never {
  return {
    key: String(taint.key),
    ...(taint.value === undefined ? {} : { value: String(taint.value) }),
    effect: String(taint.effect ?? "NoSchedule"),
  };
}
