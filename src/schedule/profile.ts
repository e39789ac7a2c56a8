import { DEFAULT_PLUGINS, profilePluginNames } from "../model/scheduler-plugins.js";
import type { SchedulerProfile } from "../model/types.js";
import type { FilterPlugin, Profile, ReplicasPlugin, ScorePlugin, SelectPlugin, Stage } from "./framework.js";
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
 * Builds a profile from fleet.yaml (model/scheduler-plugins.ts says which names it gets): the
 * plugins of each stage in the profile's order, or why a name is wrong.
 */
export function buildProfile(spec: SchedulerProfile | undefined): ProfileResult {
  if (!spec) return { ok: true, profile: DEFAULT_PROFILE };
  const names = profilePluginNames(spec);
  if (!names.ok) return names;
  return {
    ok: true,
    profile: {
      filter: pick(REGISTRY.filter, names.stages.filter),
      score: pick(REGISTRY.score, names.stages.score),
      select: pick(REGISTRY.select, names.stages.select),
      replicas: pick(REGISTRY.replicas, names.stages.replicas),
    },
  };
}

/** The plugin names the scheduler holds, per stage (a test checks they are the catalogue's). */
export function registeredPluginNames(): Record<Stage, string[]> {
  return {
    filter: REGISTRY.filter.map((p) => p.name),
    score: REGISTRY.score.map((p) => p.name),
    select: REGISTRY.select.map((p) => p.name),
    replicas: REGISTRY.replicas.map((p) => p.name),
  };
}

function pick<P extends { readonly name: string }>(plugins: readonly P[], names: readonly string[]): P[] {
  return names.flatMap((name) => plugins.filter((p) => p.name === name));
}
