import { prototypeKeyPaths } from "../apimachinery/json.js";
import { formatProblem, type Problem } from "../model/problem.js";
import { compileSchema } from "../model/schema-compiler.js";
import { schemaProblems } from "../model/schema-problems.js";
import type { KindValidator } from "../model/schemas.js";
import type { PlacementSpec, Taint } from "../model/types.js";
import { locate, parseSourceFile } from "../model/yaml-source.js";
import type { ClusterState, NodeState, SchedulingProblem, WorkloadInfo } from "./types.js";

const quantity = { type: ["string", "number"] };
const resourceList = { type: "object", additionalProperties: quantity };

/** The JSON Schema of `gitfleet schedule`'s input; the placement is a Placement's spec. */
export const PROBLEM_SCHEMA = {
  $id: "https://gitfleet.io/schema/v1alpha1/scheduling-problem.json",
  type: "object",
  required: ["replicas", "placement", "clusters"],
  additionalProperties: false,
  properties: {
    workload: { type: "object" },
    replicas: { type: "integer", minimum: 0 },
    placement: { $ref: "https://gitfleet.io/schema/v1alpha1/placement.schema.json#/properties/spec" },
    rebalance: { type: "boolean" },
    clusters: {
      type: "array",
      items: {
        type: "object",
        required: ["name"],
        additionalProperties: false,
        properties: {
          name: { type: "string", minLength: 1 },
          labels: { $ref: "https://gitfleet.io/schema/v1alpha1/common.schema.json#/$defs/stringMap" },
          provider: { type: "string" },
          region: { type: "string" },
          zone: { type: "string" },
          taints: {
            type: "array",
            items: { $ref: "https://gitfleet.io/schema/v1alpha1/common.schema.json#/$defs/taint" },
          },
          unschedulable: { type: "boolean" },
          ready: { type: "boolean" },
          availableReplicas: { type: "integer", minimum: 0 },
          currentReplicas: { type: "integer", minimum: 0 },
          apiEnablements: { type: "array", items: { type: "string" } },
          summary: {
            type: "object",
            required: ["allocatable"],
            additionalProperties: false,
            properties: { allocatable: resourceList, requested: resourceList },
          },
          nodes: {
            type: "array",
            items: {
              type: "object",
              required: ["allocatable"],
              additionalProperties: false,
              properties: {
                name: { type: "string" },
                allocatable: resourceList,
                requested: resourceList,
                labels: { type: "object", additionalProperties: { type: "string" } },
                taints: {
                  type: "array",
                  items: {
                    type: "object",
                    required: ["key", "effect"],
                    properties: {
                      key: { type: "string" },
                      value: { type: "string" },
                      effect: { type: "string" },
                    },
                  },
                },
                unschedulable: { type: "boolean" },
                ready: { type: "boolean" },
              },
            },
          },
        },
      },
    },
  },
} as const;

let validator: KindValidator | undefined;

/** The per-workload numbers `gitfleet schedule` takes on each cluster. */
interface ClusterCounts {
  readonly currentReplicas?: number;
  readonly availableReplicas?: number;
}

/** A parsed problem, or the problems with the input, each with line and column. */
export type ReadProblemResult =
  | { readonly ok: true; readonly problem: SchedulingProblem }
  | { readonly ok: false; readonly errors: readonly string[] };

/** Parses and validates `gitfleet schedule` input (JSON, or YAML) into a SchedulingProblem. */
export function readSchedulingProblem(source: string, bytes: Uint8Array): ReadProblemResult {
  const parsed = parseSourceFile(source, bytes);
  const [document, extra] = parsed.documents;
  const fail = (problems: readonly Problem[]) => ({
    ok: false as const,
    errors: problems.map(formatProblem),
  });
  if (parsed.problems.some((p) => p.severity === "error")) return fail(parsed.problems);
  if (!document || extra) return { ok: false, errors: [`${source}: expected exactly one JSON object`] };
  const forbidden = prototypeKeyPaths(document.value);
  if (forbidden.length > 0)
    return fail(
      forbidden.map((path) => ({
        ...locate(document, path, "key"),
        severity: "error" as const,
        code: "FORBIDDEN_KEY" as const,
        message: `the key "${String(path.at(-1))}" is not allowed: it reaches JavaScript's object prototype`,
      })),
    );
  validator ??= compileSchema(PROBLEM_SCHEMA);
  const errors = validator(document.value);
  if (errors.length > 0) return fail(schemaProblems(document, errors));
  // The schema has checked every field used below.
  const input = document.value as {
    workload?: Record<string, unknown>;
    replicas: number;
    placement: PlacementSpec;
    rebalance?: boolean;
    clusters: (Partial<ClusterState> &
      ClusterCounts & { name: string; taints?: Taint[]; nodes?: NodeState[] })[];
  };
  const names = input.clusters.map((c) => c.name);
  const twice = names.find((name, i) => names.indexOf(name) !== i);
  if (twice !== undefined) return { ok: false, errors: [`${source}: cluster "${twice}" is listed twice`] };
  // Per-workload counts come in on each cluster; the scheduler keeps them apart from shared cluster state.
  const clusters = input.clusters.map(
    ({ currentReplicas: _current, availableReplicas: _available, ...c }): ClusterState => ({
      ...c,
      labels: c.labels ?? {},
      provider: c.provider ?? "",
      region: c.region ?? "",
      zone: c.zone ?? "",
      taints: c.taints ?? [],
      unschedulable: c.unschedulable ?? false,
      ready: c.ready ?? true,
    }),
  );
  const countsOf = (field: keyof ClusterCounts) =>
    Object.fromEntries(input.clusters.flatMap((c) => (c[field] === undefined ? [] : [[c.name, c[field]]])));
  const workload = input.workload ?? {};
  const problem: SchedulingProblem = {
    workload: { ...workload, ...workloadIdentity(workload) },
    replicas: input.replicas,
    placement: input.placement,
    clusters,
    current: countsOf("currentReplicas"),
    available: countsOf("availableReplicas"),
    ...(input.rebalance === undefined ? {} : { rebalance: input.rebalance }),
  };
  return { ok: true, problem };
}

// The workload may be a whole object (a Deployment, a CloneSet) or just its identity fields.
function workloadIdentity(workload: Record<string, unknown>): WorkloadInfo {
  const metadata = (
    typeof workload.metadata === "object" && workload.metadata !== null ? workload.metadata : {}
  ) as Record<string, unknown>;
  const spec = (typeof workload.spec === "object" && workload.spec !== null ? workload.spec : {}) as Record<
    string,
    unknown
  >;
  const pick = (key: string) =>
    typeof workload[key] === "string"
      ? workload[key]
      : typeof metadata[key] === "string"
        ? metadata[key]
        : undefined;
  const fields = { namespace: pick("namespace"), name: pick("name"), uid: pick("uid") };
  return {
    ...Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)),
    ...(workload.podTemplate === undefined && spec.template !== undefined
      ? { podTemplate: spec.template }
      : {}),
  };
}
