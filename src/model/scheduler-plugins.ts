import type { PluginSet, SchedulerProfile } from "./types.js";

/**
 * The scheduler's built-in plugins per stage, in their default order: the catalogue the validator
 * checks fleet.yaml's scheduler profiles against, and the scheduler builds its profiles from (it
 * holds a plugin for every name here; a test keeps the two equal).
 */
export const DEFAULT_PLUGINS = {
  filter: [
    "ClusterReady",
    "Unschedulable",
    "TaintToleration",
    "ClusterAffinity",
    "APIEnablement",
    "SpreadConstraint",
  ],
  score: ["ClusterLocality", "AvailableCapacity"],
  select: ["SpreadConstraints", "MaxClusters"],
  replicas: ["ReplicaDivision"],
} as const satisfies Record<string, readonly string[]>;

/** A scheduling stage, in the order the scheduler runs them. */
export type SchedulerStage = keyof typeof DEFAULT_PLUGINS;

/** A profile's plugin names per stage, or why the profile is wrong. */
export type ProfileNames =
  | { readonly ok: true; readonly stages: Readonly<Record<SchedulerStage, readonly string[]>> }
  | { readonly ok: false; readonly error: string };

/**
 * A scheduler profile's plugins by name: per stage, the default list minus `disabled` ("*" removes
 * all), then `enabled` appended in order. An unknown plugin, or one enabled twice, is an error.
 */
export function profilePluginNames(spec: SchedulerProfile): ProfileNames {
  const stages: Partial<Record<SchedulerStage, readonly string[]>> = {};
  for (const stage of ["filter", "score", "select", "replicas"] as const) {
    const names = stageNames(stage, spec.plugins?.[stage]);
    if (typeof names === "string") return { ok: false, error: `scheduler profile "${spec.name}": ${names}` };
    stages[stage] = names;
  }
  // The loop set every stage.
  return { ok: true, stages: stages as Record<SchedulerStage, readonly string[]> };
}

// The stage's plugin names after applying the set, or why the set is wrong.
function stageNames(stage: SchedulerStage, set: PluginSet | undefined): readonly string[] | string {
  const known: readonly string[] = DEFAULT_PLUGINS[stage];
  for (const name of [...(set?.enabled ?? []), ...(set?.disabled ?? []).filter((n) => n !== "*")]) {
    if (!known.includes(name)) return `unknown ${stage} plugin "${name}" (known: ${known.join(", ")})`;
  }
  const disabled = set?.disabled ?? [];
  const kept = disabled.includes("*") ? [] : known.filter((name) => !disabled.includes(name));
  const names = [...kept, ...(set?.enabled ?? [])];
  const twice = names.find((name, i) => names.indexOf(name) !== i);
  if (twice !== undefined) return `${stage} plugin "${twice}" is enabled twice`;
  return names;
}
