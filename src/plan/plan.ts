import { createTwoFilesPatch } from "diff";
import { asMap } from "../apimachinery/json.js";
import { compareStrings } from "../model/file-tree.js";
import { describeManifest } from "../model/identity.js";
import type { Problem } from "../model/problem.js";
import { syncRoleOf } from "../model/sync-annotations.js";
import type { RenderedObject, RenderResult } from "../render/render-result.js";
import { type SecretKeyChanges, secretKeyChanges } from "../render/secrets.js";
import { serviceChanges, serviceViews } from "../render/service-discovery/service-views.js";
import { describeShortfall, type Shortfall, shortfallOf } from "../schedule/shortfall.js";
import type { ClusterRoom, ScheduleDecision } from "../schedule/types.js";
import type { InventoryEntry, InventoryRecord } from "../sync/inventory.js";
import { type PruneSettings, planPrune } from "../sync/prune-plan.js";
import { type ControlPlaneChange, controlPlaneChanges } from "./control-plane-changes.js";
import type { MigrationPlan } from "./migration-plan.js";

/** One object that a cluster gains, loses or sees changed. */
export interface ObjectChange {
  readonly path: string;
  /** The app the object belongs to. */
  readonly app: string;
  /** "Deployment shop/web". */
  readonly object: string;
  /** A unified diff of the rendered file; absent for Secrets, whose values are never shown. */
  readonly diff?: string;
  readonly secret: boolean;
  /** For a changed Secret: which of its keys were added, removed or changed (never a value). */
  readonly secretKeys?: SecretKeyChanges;
  /** What built it, for a built app: "kustomize apps/docs/overlays/prod (target prod)", "helm chart …". */
  readonly source?: string;
  /** A hook's phases ("PreSync"): made afresh at each run, replacing only its own earlier run. */
  readonly hook?: string;
}

/** A hook whose identity a live object holds that is not gitfleet's hook of the app (read with --kubeconfig). */
export interface HookConflict {
  readonly cluster: string;
  /** "ConfigMap kube-system/coredns-conf". */
  readonly object: string;
  readonly app: string;
  readonly hook: string;
}

/** What one cluster gets from the change. */
export interface ClusterPlan {
  readonly cluster: string;
  readonly added: readonly ObjectChange[];
  readonly changed: readonly ObjectChange[];
  readonly removed: readonly ObjectChange[];
  /** Workloads that no longer run here, and the filter that removed the cluster. */
  readonly filteredOut: readonly WorkloadNote[];
  /** Workloads that now keep their replicas here but take no new ones (cordon, NotReady, NoSchedule taint). */
  readonly frozen: readonly WorkloadNote[];
  /** The removals exceed the deletion budget: the sync will delete nothing here until a commit allows this token. */
  readonly pruneBlocked?: { readonly token: string; readonly reasons: readonly string[] };
  /** The removals exceed the budget but the head allows them with this token. */
  readonly pruneAllowedBy?: string;
}

/** A workload and why the scheduler treats the cluster as it does. */
export interface WorkloadNote {
  readonly app: string;
  readonly workload: string;
  readonly reason: string;
}

/** A workload whose replica distribution changes. */
export interface DistributionChange {
  readonly app: string;
  readonly workload: string;
  readonly before: Readonly<Record<string, number>>;
  readonly after: Readonly<Record<string, number>>;
  /** Per cluster with a bound, the most replicas of it the cluster can hold after the change, and what sets it. */
  readonly room?: Readonly<Record<string, ClusterRoom>>;
  /** A Placement with overflow tiers: each tier's replicas before and after, in the tiers' order. */
  readonly tiers?: readonly { readonly name: string; readonly before: number; readonly after: number }[];
}

/** A workload the change leaves with replicas that fit nowhere, or lets fit where some did not (unplaced 0). */
export interface UnplacedReplicas extends Shortfall {
  readonly app: string;
  readonly workload: string;
  /** What the base left unplaced of it (0 when all fit, or it is new). */
  readonly before: number;
  /** "12 of 60 replicas of Deployment games/game fit nowhere: the selected clusters fit 48 (cpu)". */
  readonly message: string;
}

/** What the plan's verdict does with replicas that fit nowhere (fleet.yaml spec.plan.unplacedReplicas). */
export type UnplacedPolicy = "Warn" | "Fail";

/** The exact per-cluster effect of going from one revision's render to another's. */
export interface Plan {
  readonly clusters: readonly ClusterPlan[];
  readonly distributions: readonly DistributionChange[];
  /** Workloads whose decision the change touches that have replicas placed nowhere before or after it. */
  readonly unplaced?: readonly UnplacedReplicas[];
  /** Whether unplaced replicas fail the plan's status (the base's fleet.yaml says; default Warn). */
  readonly unplacedPolicy?: UnplacedPolicy;
  /** Hosted control planes' components whose images, flags or pods change, per host. */
  readonly controlPlanes?: readonly ControlPlaneChange[];
  /** Batches the change approves or rolls back, and what adopting changes in what runs. */
  readonly migrations?: MigrationPlan;
  /** Control-plane upgrade batches whose state the merge changes ("cve/canary: WaitingApproval → Syncing (…)"). */
  readonly upgrades?: readonly string[];
  /** Per exported service whose exports, imports, endpoints or records change, one line (service-views.ts). */
  readonly services?: readonly string[];
  /** When the changed apps apply: suspends, sync windows, dependencies, hooks and waves (sync-timing.ts). */
  readonly timing?: readonly string[];
  /** What the change does not do as written (a replicas change an autoscaler overrides), with file and line. */
  readonly warnings?: readonly Problem[];
  /** Hooks that would meet a live object gitfleet did not make: they will not run (read with --kubeconfig). */
  readonly hookConflicts?: readonly HookConflict[];
  readonly changed: boolean;
}

/**
 * Compares two renders of the fleet: per cluster, the objects added, changed (with a unified diff)
 * and removed, and the workloads newly filtered out with the reason; per workload, the replica
 * distribution before and after. Secrets are reported as changed without a diff. Pure.
 */
export function planChange(
  base: RenderResult,
  head: RenderResult,
  prune?: PruneSettings,
  inventories?: ReadonlyMap<string, InventoryRecord>,
): Plan {
  const before = new Map(base.objects.map((o) => [o.path, o]));
  const after = new Map(head.objects.map((o) => [o.path, o]));
  const clusters = [...new Set([...before.values(), ...after.values()].map((o) => o.cluster))].sort(
    compareStrings,
  );
  const plans = clusters
    .map((cluster) =>
      withPruneBudget(
        planCluster(cluster, before, after, base, head),
        base,
        prune,
        inventories?.get(cluster),
      ),
    )
    .filter(hasChanges);
  const distributions = distributionChanges(base, head);
  const unplaced = unplacedReplicas(base, head);
  const controlPlanes = controlPlaneChanges(base, head);
  const services = serviceChanges(serviceViews(base.objects), serviceViews(head.objects));
  return {
    clusters: plans,
    distributions,
    ...(unplaced.length > 0 ? { unplaced } : {}),
    ...(controlPlanes.length > 0 ? { controlPlanes } : {}),
    ...(services.length > 0 ? { services } : {}),
    changed: plans.length > 0 || distributions.length > 0 || unplaced.some((u) => u.unplaced !== u.before),
  };
}

function planCluster(
  cluster: string,
  before: ReadonlyMap<string, RenderedObject>,
  after: ReadonlyMap<string, RenderedObject>,
  base: RenderResult,
  head: RenderResult,
): ClusterPlan {
  const paths = [...new Set([...before.keys(), ...after.keys()])]
    .filter((p) => p.startsWith(`rendered/${cluster}/`))
    .sort(compareStrings);
  const added: ObjectChange[] = [];
  const changed: ObjectChange[] = [];
  const removed: ObjectChange[] = [];
  for (const path of paths) {
    const old = before.get(path);
    const now = after.get(path);
    if (old && now && old.text === now.text) continue;
    if (!old && now) added.push(describeChange(path, now, undefined));
    else if (old && !now) removed.push(describeChange(path, old, undefined));
    else if (old && now) changed.push(describeChange(path, now, old));
  }
  return { cluster, added, changed, removed, ...schedulingNotes(cluster, base, head) };
}

/**
 * The deletion budget's verdict on a cluster's removals, as the sync will give it: the cluster's
 * inventory is what the base renders there (what gitfleet applied) — marked adopted where the
 * status branch's inventory says so, with its prune base, which the token is bound to — and the
 * removals are what leaves.
 */
function withPruneBudget(
  plan: ClusterPlan,
  base: RenderResult,
  prune: PruneSettings | undefined,
  recorded: InventoryRecord | undefined,
): ClusterPlan {
  if (!prune || plan.removed.length === 0) return plan;
  const inventory = new Map<string, InventoryEntry>();
  for (const object of base.objects) {
    if (object.cluster !== plan.cluster) continue;
    const metadata = object.object.metadata as { name?: string; namespace?: string };
    inventory.set(object.identity, {
      identity: object.identity,
      apiVersion: String(object.object.apiVersion),
      kind: String(object.object.kind),
      namespace: metadata.namespace,
      name: String(metadata.name),
      app: object.app,
      uid: "",
      digest: "",
      ...(recorded?.inventory.get(object.identity)?.adopted ? { adopted: true } : {}),
    });
  }
  const removed = new Set(plan.removed.map((change) => change.path));
  const desired = new Set(
    base.objects.filter((o) => o.cluster === plan.cluster && !removed.has(o.path)).map((o) => o.identity),
  );
  const verdict = planPrune(plan.cluster, inventory, desired, prune, recorded?.pruneBase);
  if (verdict.blocked)
    return { ...plan, pruneBlocked: { token: verdict.blocked.token, reasons: verdict.blocked.reasons } };
  const strict = planPrune(
    plan.cluster,
    inventory,
    desired,
    { ...prune, allowedTokens: new Set(), appTokens: new Map() },
    recorded?.pruneBase,
  );
  return strict.blocked ? { ...plan, pruneAllowedBy: strict.blocked.token } : plan;
}

function describeChange(path: string, object: RenderedObject, old: RenderedObject | undefined): ObjectChange {
  const name = describeManifest(object.object);
  const secret = object.object.kind === "Secret" && !String(object.object.apiVersion).includes("/");
  const phases = hookPhases(object);
  const about = { path, app: object.app, object: name, secret };
  const source = { ...(object.source ? { source: object.source } : {}), ...(phases ? { hook: phases } : {}) };
  if (secret && old !== undefined)
    return { ...about, ...source, secretKeys: secretKeyChanges(old.object, object.object) };
  if (old === undefined || secret) return { ...about, ...source };
  const diff = createTwoFilesPatch(path, path, old.text, object.text, "", "", { context: 3 });
  // Drop the "Index:"/"===" header lines; keep the ---/+++ and hunks.
  return { ...about, ...source, diff: diff.split("\n").slice(2).join("\n") };
}

// Workloads that ran on the cluster and are now filtered out there, or newly frozen there.
function schedulingNotes(
  cluster: string,
  base: RenderResult,
  head: RenderResult,
): { filteredOut: WorkloadNote[]; frozen: WorkloadNote[] } {
  const ranBefore = new Set(
    base.decisions.filter((d) => (d.decision.clusters[cluster] ?? 0) > 0).map((d) => d.identity),
  );
  const frozenBefore = new Set(
    base.decisions.filter((d) => d.decision.diagnosis.frozen[cluster] !== undefined).map((d) => d.identity),
  );
  const filteredOut: WorkloadNote[] = [];
  const frozen: WorkloadNote[] = [];
  for (const d of head.decisions) {
    const removed = d.decision.diagnosis.filtered[cluster] ?? unselected(d.decision, cluster);
    const kept = d.decision.diagnosis.frozen[cluster];
    if (removed !== undefined && ranBefore.has(d.identity))
      filteredOut.push({ app: d.app, workload: d.resource, reason: removed + keptNote(d, cluster) });
    if (kept !== undefined && !frozenBefore.has(d.identity))
      frozen.push({ app: d.app, workload: d.resource, reason: kept });
  }
  return { filteredOut, frozen };
}

// A cluster the diagnosis does not name at all was left out because the Placement does not ask for it
// (the diagnosis counts such clusters without listing them).
function unselected(decision: ScheduleDecision, cluster: string): string | undefined {
  const { diagnosis } = decision;
  const named =
    diagnosis.frozen[cluster] !== undefined ||
    diagnosis.notSelected[cluster] !== undefined ||
    diagnosis.selected.includes(cluster);
  return named ? undefined : "not among the clusters its Placement selects";
}

// Where failover keeps the old replicas until their replacements are ready, the plan says so.
function keptNote(decision: RenderResult["decisions"][number], cluster: string): string {
  const kept = decision.failover?.keeping.find((k) => k.cluster === cluster);
  if (!kept) return "";
  const until =
    kept.purgeMode === "Never" ? "until the Placement changes" : "until the new ones are ready elsewhere";
  return `; its ${kept.replicas} replicas stay ${until} (purgeMode ${kept.purgeMode})`;
}

const keyOf = (d: RenderResult["decisions"][number]) => `${d.app}\0${d.resource}`;

// Workloads whose decision the change touches (its counts or what fits nowhere) and that have
// replicas placed nowhere in the head, as the head's decisions say, in app and workload order.
function unplacedReplicas(base: RenderResult, head: RenderResult): UnplacedReplicas[] {
  const before = new Map(base.decisions.map((d) => [keyOf(d), d]));
  const out: UnplacedReplicas[] = [];
  for (const d of [...head.decisions].sort((a, b) => compareStrings(keyOf(a), keyOf(b)))) {
    const was = before.get(keyOf(d));
    const wasShort = was?.decision.unschedulable ?? 0;
    // A change that lets every replica fit where some did not says so too.
    const shortfall =
      shortfallOf(d.replicas, d.decision) ??
      (wasShort > 0 ? { unplaced: 0, replicas: d.replicas, fits: d.replicas, bounds: [] } : undefined);
    if (!shortfall) continue;
    const same =
      was !== undefined &&
      was.decision.unschedulable === d.decision.unschedulable &&
      was.replicas === d.replicas &&
      JSON.stringify(was.decision.clusters) === JSON.stringify(d.decision.clusters);
    if (same) continue;
    out.push({
      app: d.app,
      workload: d.resource,
      ...shortfall,
      before: wasShort,
      message:
        shortfall.unplaced > 0
          ? describeShortfall(d.resource, shortfall)
          : `all ${d.replicas} replicas of ${d.resource} fit (${wasShort} fit nowhere before)`,
    });
  }
  return out;
}

function distributionChanges(base: RenderResult, head: RenderResult): DistributionChange[] {
  const before = new Map(base.decisions.map((d) => [keyOf(d), d]));
  const after = new Map(head.decisions.map((d) => [keyOf(d), d]));
  const keys = [...new Set([...before.keys(), ...after.keys()])].sort(compareStrings);
  return keys.flatMap((key) => {
    const old = before.get(key)?.decision.clusters ?? {};
    const now = after.get(key)?.decision.clusters ?? {};
    if (JSON.stringify(old) === JSON.stringify(now)) return [];
    const decision = after.get(key) ?? before.get(key);
    if (!decision) return [];
    const tiers = tierChanges(before.get(key), after.get(key));
    const room = after.get(key)?.decision.diagnosis.room;
    return [
      {
        app: decision.app,
        workload: decision.resource,
        before: old,
        after: now,
        ...(room && Object.keys(room).length > 0 ? { room } : {}),
        ...(tiers ? { tiers } : {}),
      },
    ];
  });
}

// Each overflow tier's replicas on both sides, when either side was divided over tiers.
function tierChanges(
  base: RenderResult["decisions"][number] | undefined,
  head: RenderResult["decisions"][number] | undefined,
): DistributionChange["tiers"] {
  const before = base?.decision.diagnosis.tiers ?? [];
  const after = head?.decision.diagnosis.tiers ?? [];
  if (before.length === 0 && after.length === 0) return undefined;
  const names = [
    ...after.map((t) => t.name),
    ...before.map((t) => t.name).filter((n) => !after.some((t) => t.name === n)),
  ];
  return names.map((name) => ({
    name,
    before: before.find((t) => t.name === name)?.replicas ?? 0,
    after: after.find((t) => t.name === name)?.replicas ?? 0,
  }));
}

/** Whether a cluster's plan changes anything there. */
export function hasChanges(plan: ClusterPlan): boolean {
  return (
    plan.added.length +
      plan.changed.length +
      plan.removed.length +
      plan.filteredOut.length +
      plan.frozen.length >
    0
  );
}

/** A rendered object's hook phases ("PreSync, PostSync"), or undefined when it is not a hook. */
export function hookPhases(object: RenderedObject): string | undefined {
  const role = syncRoleOf(asMap(asMap(object.object.metadata).annotations));
  return role.kind === "hook" ? role.hook.phases.join(", ") : undefined;
}

/** The plan's workloads that still have replicas placed nowhere after the change. */
export function stillUnplaced(plan: Plan): UnplacedReplicas[] {
  return (plan.unplaced ?? []).filter((u) => u.unplaced > 0);
}
