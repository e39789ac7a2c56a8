import { applicationFailover } from "../failover/workload-failover.js";
import { controlPlaneAppName } from "../model/controlplane/app-names.js";
import { smallest } from "../model/extremes.js";
import { compareStrings } from "../model/file-tree.js";
import { identityOf } from "../model/identity.js";
import type { ObservedState } from "../model/observed-state.js";
import { exportedServices } from "../model/service-exports.js";
import { stateRules } from "../model/state-preservation.js";
import type { FleetModel, HostedPlaneStates } from "../model/types.js";
import type { RenderResult, WorkloadDecision } from "../render/render-result.js";
import { entryPointKey } from "../render/service-discovery/traffic.js";
import { fnv32a } from "../schedule/division/fnv.js";
import { placementTolerations, toleratedUntil, tolerates } from "../schedule/plugins/taint-toleration.js";

// Which observations a render depends on, as keys: when a key changes, what it covers is rendered
// again by the observation step (failover moves, autoscaled totals). Clusters' conditions reach every app; a workload's member reports matter only to a workload
// failover is watching (old replicas kept, capacity capped, or application failover enabled).

/** The observations the last render used, reduced to what can change its output. */
export interface ObservationKeys {
  /** Every cluster's condition and which NoExecute tolerations have run out. */
  readonly clusters: string;
  /** Per app, the reports and deadlines of the workloads failover watches. */
  readonly apps: ReadonlyMap<string, string>;
  /** Some cluster is NotReady or carries a health taint. */
  readonly disturbed: boolean;
}

/**
 * The keys of a render made with these observations, of a model whose hosted control planes were
 * generated with `planes` (a plane no longer given a state renders again too). Pure.
 */
export function observationKeys(
  model: FleetModel,
  render: RenderResult,
  observations: ObservedState,
  planes?: HostedPlaneStates,
): ObservationKeys {
  const { now } = observations;
  const clusters = [...observations.clusters]
    .sort(([a], [b]) => compareStrings(a, b))
    .map(([name, c]) => [
      name,
      c.ready,
      c.taints.map((t) => `${t.key}:${t.effect}`),
      toleranceDeadlines(model, observations, name).filter((t) => t <= now).length,
    ]);
  const watched = new Set(
    model.placements.filter((p) => applicationFailover(p.spec)).map((p) => p.metadata.name),
  );
  const apps = new Map<string, string[]>();
  const capacity = capacityKeys(observations);
  const preserving = new Set(
    model.placements.filter((p) => stateRules(p.spec).length > 0).map((p) => p.metadata.name),
  );
  for (const decision of render.decisions) {
    const keys = [
      autoscaleKey(decision, observations),
      capacityKey(decision, observations, capacity),
      stateKey(decision, observations, preserving),
      failoverKey(decision, observations, watched),
    ].filter((key): key is string => key !== undefined);
    if (keys.length > 0) apps.set(decision.app, [...(apps.get(decision.app) ?? []), ...keys]);
  }
  upgradeKeys(planes, observations, apps);
  trafficKeys(model, observations, apps);
  return {
    clusters: JSON.stringify([clusters, servedKey(observations)]),
    apps: new Map([...apps].map(([app, keys]) => [app, keys.join("\n")])),
    disturbed: [...observations.clusters.values()].some((c) => !c.ready || c.taints.length > 0),
  };
}

// A workload failover watches (application failover, or old replicas kept or capped): what its
// clusters report, and whether its next failover change is due.
function failoverKey(
  decision: WorkloadDecision,
  observations: ObservedState,
  watched: ReadonlySet<string>,
): string | undefined {
  const record = decision.failover;
  const watching =
    watched.has(decision.placement) || (record && (record.keeping.length > 0 || record.capped.length > 0));
  if (!watching) return undefined;
  const seen = observations.workloads.get(decision.identity) ?? new Map();
  return JSON.stringify([
    decision.identity,
    [...seen].sort(([a], [b]) => compareStrings(a, b)),
    decision.wakeAt === undefined || decision.wakeAt > observations.now,
  ]);
}

// What a workload's statePreservation rules read in each cluster that answers: when it changes, the
// decision remembers the new values (a failover carries what the cluster last gave).
function stateKey(
  decision: WorkloadDecision,
  observations: ObservedState,
  preserving: ReadonlySet<string>,
): string | undefined {
  if (!preserving.has(decision.placement)) return undefined;
  const seen = observations.workloads.get(decision.identity) ?? new Map();
  const states = [...seen]
    .filter(([, replicas]) => replicas.state !== undefined)
    .map(([cluster, replicas]) => [cluster, replicas.state])
    .sort(([a], [b]) => compareStrings(String(a), String(b)));
  return JSON.stringify(["state", decision.identity, states]);
}

// Where traffic goes to an exported service (endpoints and dns modes) follows its entry points and
// whether its backends have ready replicas in each cluster: when either moves, its app renders again.
function trafficKeys(model: FleetModel, observations: ObservedState, apps: Map<string, string[]>): void {
  const discovery = model.fleet?.spec.serviceDiscovery;
  if (!discovery || discovery.mode === "mcs") return;
  const clusters = model.clusters.map((c) => c.metadata.name);
  for (const exported of exportedServices(model)) {
    const key = entryPointKey(discovery, exported);
    const ready = exported.backends.map((b) => {
      const seen = observations.workloads.get(identityOf(b.group, b.kind, b.namespace, b.name));
      return clusters.map((c) => {
        const replicas = seen?.get(c);
        return replicas === undefined ? null : replicas.ready > 0;
      });
    });
    const entries = clusters.map((c) => observations.entryPoints?.get(c)?.get(key) ?? []);
    apps.set(exported.app, [
      ...(apps.get(exported.app) ?? []),
      JSON.stringify(["traffic", key, entries, ready]),
    ]);
  }
}

// A hosted control plane renders again when an upgrade batch moves its version or a restore its phase.
function upgradeKeys(
  planes: HostedPlaneStates | undefined,
  observations: ObservedState,
  apps: Map<string, string[]>,
): void {
  const clusters = new Set([
    ...(observations.controlPlaneVersions?.keys() ?? []),
    ...(observations.controlPlaneRestores?.keys() ?? []),
    ...(planes?.versions.keys() ?? []),
    ...(planes?.restores.keys() ?? []),
  ]);
  for (const cluster of clusters) {
    const app = controlPlaneAppName(cluster);
    const version = observations.controlPlaneVersions?.get(cluster);
    const restore = observations.controlPlaneRestores?.get(cluster);
    apps.set(app, [
      ...(apps.get(app) ?? []),
      `upgrade:${version ?? ""}`,
      `restore:${JSON.stringify(restore ?? null)}`,
    ]);
  }
}

// What each cluster serves, as a digest: a kind appearing or going re-renders everything (rare: a
// CRD installed, an upgrade).
function servedKey(observations: ObservedState): string[] {
  return [...(observations.served ?? [])]
    .sort(([a], [b]) => compareStrings(a, b))
    .map(([name, apis]) => `${name}:${fnv32a(JSON.stringify(apis)).toString(16)}`);
}

// The recorded free room of every cluster, computed only when some decision needs it.
function capacityKeys(observations: ObservedState): () => string {
  let key: string | undefined;
  return () => {
    key ??= JSON.stringify(
      [...(observations.capacity ?? [])]
        .sort(([a], [b]) => compareStrings(a, b))
        .map(([name, c]) => [name, c.pools.map((p) => [p.count, p.free, p.ready, p.unschedulable])]),
    );
    return key;
  };
}

// What capacity a workload's decision waits on: clusters whose capacity was unknown when it was
// divided (known now, it is divided again), or room for replicas that found none.
function capacityKey(
  decision: RenderResult["decisions"][number],
  observations: ObservedState,
  capacity: () => string,
): string | undefined {
  const unknown = decision.capacityUnknown ?? [];
  const short = decision.decision.unschedulable > 0;
  if (unknown.length === 0 && !short) return undefined;
  return JSON.stringify([
    decision.identity,
    unknown.map((c) => observations.capacity?.has(c) === true),
    short ? capacity() : null,
  ]);
}

// What autoscalers feed the render for a workload: its total, or its member HPAs' distribution and
// bounds. Undefined when nothing scales it (and nothing did in this render).
function autoscaleKey(
  decision: RenderResult["decisions"][number],
  observations: ObservedState,
): string | undefined {
  const total = observations.autoscaled?.get(decision.identity);
  const distributed = observations.distributed?.get(decision.identity);
  const held = observations.held?.get(decision.identity);
  if (
    !total &&
    !distributed &&
    !held &&
    !decision.autoscaledBy &&
    !decision.memberHpas &&
    !decision.scaleDownBy
  )
    return undefined;
  return JSON.stringify([decision.identity, total ?? null, distributed ?? null, held ?? null]);
}

/**
 * What to render again when the keys moved: every app when a cluster's condition did, else the apps
 * whose keys differ. Without keys from before (a restart), only a disturbed fleet is rendered whole;
 * a quiet one renders again just the apps failover watches.
 */
export function observationScope(
  before: ObservationKeys | undefined,
  after: ObservationKeys,
): "all" | Set<string> {
  if (!before) return after.disturbed ? "all" : new Set(after.apps.keys());
  if (before.clusters !== after.clusters) return "all";
  const apps = new Set<string>();
  for (const [app, key] of after.apps) if (before.apps.get(app) !== key) apps.add(app);
  for (const app of before.apps.keys()) if (!after.apps.has(app)) apps.add(app);
  return apps;
}

/**
 * When the tolerations of NoExecute taints observed on a cluster run out, per Placement (ms since
 * the epoch): at each, some workloads stop tolerating the cluster and fail over.
 */
export function toleranceDeadlines(
  model: FleetModel,
  observations: ObservedState,
  cluster: string,
): number[] {
  const taints = (observations.clusters.get(cluster)?.taints ?? []).filter((t) => t.effect === "NoExecute");
  const deadlines = new Set<number>();
  for (const placement of model.placements)
    for (const taint of taints)
      for (const toleration of placementTolerations(placement.spec)) {
        if (!tolerates(toleration, taint)) continue;
        const until = toleratedUntil(toleration, taint);
        if (until !== undefined) deadlines.add(until);
      }
  return [...deadlines].sort((a, b) => a - b);
}

/** The next time (ms) a render's output can change with no new observation: a toleration, grace period or cool-down ending. */
export function nextWake(
  model: FleetModel,
  render: RenderResult,
  observations: ObservedState,
): number | undefined {
  const times: number[] = [];
  for (const cluster of observations.clusters.keys())
    for (const t of toleranceDeadlines(model, observations, cluster)) times.push(t);
  for (const decision of render.decisions) if (decision.wakeAt !== undefined) times.push(decision.wakeAt);
  const future = times.filter((t) => t > observations.now);
  return smallest(future);
}
