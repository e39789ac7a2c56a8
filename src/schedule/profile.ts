import type { PluginSet, SchedulerProfile } from "../model/types.js";
import type { FilterPlugin, Profile, ReplicasPlugin, ScorePlugin, SelectPlugin, Stage } from "./framework.js";
import { DEFAULT_PLUGINS } from "./plugin-names.js";
import { APIEnablement } from "./plugins/api-enablement.js";
import { AvailableCapacity } from "./plugins/available-capacity.js";
import { ClusterAffinity } from "./plugins/cluster-affinity.js";
import { ClusterLocality } from "./plugins/cluster-locality.js";
import { ClusterReady } from "./plugins/cluster-ready.js";
import { MaxClusters } from "./plugins/max-clusters.js";
import { ReplicaDivision } from "./plugins/replica-division.js";
import { SpreadConstraint } from "./plugins/spread-constraint.js";
import { SpreadConstraints } from "./plugins/spread-constraints.js";
import { TaintToleration } from "./plugins/taint-toleration.js";
import { Unschedulable } from "./plugins/unschedulable.js";

const REGISTRY = {
  filter: [ClusterReady, Unschedulable, TaintToleration, ClusterAffinity, APIEnablement, SpreadConstraint],
  score: [ClusterLocality, AvailableCapacity],
  select: [SpreadConstraints, MaxClusters],
  replicas: [ReplicaDivision],
} satisfies {
  filter: FilterPlugin[];
  score: ScorePlugin[];
  select: SelectPlugin[];
  replicas: ReplicasPlugin[];
};

/** Building a profile either gives the profile or says which plugin name is wrong. */
export type ProfileResult =
  | { readonly ok: true; readonly profile: Profile }
  | { readonly ok: false; readonly error: string };

/** The default profile: every built-in plugin, in DEFAULT_PLUGINS order. */
export const DEFAULT_PROFILE: Profile = {
  filter: pick(REGISTRY.filter, DEFAULT_PLUGINS.filter),
  score: pick(REGISTRY.score, DEFAULT_PLUGINS.score),
  select: pick(REGISTRY.select, DEFAULT_PLUGINS.select),
  replicas: pick(REGISTRY.replicas, DEFAULT_PLUGINS.replicas),
};

/**
 * Builds a profile from fleet.yaml: per stage, the default list minus `disabled` ("*" removes all),
 * then `enabled` appended in order. An unknown plugin, or one enabled twice, is an error.
 */
export function buildProfile(spec: SchedulerProfile | undefined): ProfileResult {
  if (!spec) return { ok: true, profile: DEFAULT_PROFILE };
  const stages: Partial<Record<Stage, readonly string[]>> = {};
  for (const stage of ["filter", "score", "select", "replicas"] as const) {
    const names = stageNames(stage, spec.plugins?.[stage]);
    if (typeof names === "string") return { ok: false, error: `scheduler profile "${spec.name}": ${names}` };
    stages[stage] = names;
  }
  return {
    ok: true,
    profile: {
      filter: pick(REGISTRY.filter, stages.filter ?? []),
      score: pick(REGISTRY.score, stages.score ?? []),
      select: pick(REGISTRY.select, stages.select ?? []),
      replicas: pick(REGISTRY.replicas, stages.replicas ?? []),
    },
  };
}

// The stage's plugin names after applying the set, or why the set is wrong.
function stageNames(stage: Stage, set: PluginSet | undefined): readonly string[] | string {
  const known: readonly string[] = REGISTRY[stage].map((p) => p.name);
  for (const name of [...(set?.enabled ?? []), ...(set?.disabled ?? []).filter((n) => n !== "*")]) {
    if (!known.includes(name)) return `unknown ${stage} plugin "${name}" (known: ${known.join(", ")})`;
  }
  const disabled = set?.disabled ?? [];
  const kept = disabled.includes("*")
    ? []
    : DEFAULT_PLUGINS[stage].filter((name) => !disabled.includes(name));
  const names = [...kept, ...(set?.enabled ?? [])];
  const twice = names.find((name, i) => names.indexOf(name) !== i);
  if (twice !== undefined) return `${stage} plugin "${twice}" is enabled twice`;
  return names;
}

function pick<P extends { readonly name: string }>(plugins: readonly P[], names: readonly string[]): P[] {
  return names.flatMap((name) => plugins.filter((p) => p.name === name));
}
