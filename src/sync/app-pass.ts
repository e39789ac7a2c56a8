import { asList, asMap, type JsonMap } from "../apimachinery/json.js";
import type { Health } from "../model/health.js";
import { describeIdentity } from "../model/identity.js";
import type { HookPhase } from "../model/sync-annotations.js";
import type { DesiredObject } from "./desired-objects.js";
import type { Inventory } from "./inventory.js";
import { holdsAsRendered } from "./rendering-shape.js";
import type { Hold } from "./sync-result.js";

/**
 * One pass of one app's sync in one cluster, decided from what the cluster holds when the pass
 * starts: which of its objects wait (for a hook, for an earlier sync wave), which hooks to start,
 * whether what it left behind may be pruned, and whether it stands Healthy at its rendering (what
 * its dependents wait for). Each pass moves an app at most one step — a hook phase or a wave — and
 * the controller comes back while anything is in progress, so a crash or a restart between passes
 * loses nothing: the state is what the member holds, plus the hook outcomes it keeps. Pure.
 *
 * The order is Argo CD's: PreSync hooks, then the objects and Sync hooks wave by wave (each wave
 * applied once the one before is Healthy), then, once everything is Healthy, PostSync hooks; a hook
 * that fails ends the sync (SyncFail hooks run, the app's objects stay as they run) until a new
 * rendering. An app already at its rendering is kept there (drift corrected) with no wave held.
 */

export type HookOutcome = "Pending" | "Running" | "Succeeded" | "Failed";

/** The annotation on a hook's object naming the phase and rendering it runs for: "PreSync:<revision>". */
export const HOOK_RUN_ANNOTATION = "gitfleet.io/hook-run";

export const hookRunValue = (phase: HookPhase, revision: string) => `${phase}:${revision}`;

/** What a member keeps per app for its hooks: the rendering they run for, and how those that ended did. */
export interface HookRecord {
  /** The app's rendering in the cluster, replicas aside (rendering-shape.ts). */
  readonly revision: string;
  /** The source commit that first rendered it. */
  readonly commit: string;
  /** By hook key ("PreSync batch/Job/shop/migrate"): outcomes seen, kept after a delete policy removed the object. */
  readonly outcomes: Readonly<Record<string, "Succeeded" | "Failed">>;
  /** By hook key: why a failed hook failed, as its object said. */
  readonly messages?: Readonly<Record<string, string>>;
  /** Why the sync failed, once a hook failed: SyncFail hooks were started. */
  readonly failed?: string;
}

/** One hook of one phase, with how it stands. */
export interface HookRun {
  readonly phase: HookPhase;
  readonly object: DesiredObject;
  readonly wave: number;
  readonly outcome: HookOutcome;
  readonly message?: string;
}

export const hookKey = (phase: HookPhase, identity: string) => `${phase} ${identity}`;

/** An app's objects in one cluster, sorted by role, and its rendering there. */
export interface AppInCluster {
  readonly app: string;
  /** Objects applied and kept in sync (neither hooks nor skipped). */
  readonly objects: readonly DesiredObject[];
  readonly hooks: readonly DesiredObject[];
  readonly revision: string;
}

/** What the pass reads of the cluster. */
export interface PassView {
  readonly inventory: Inventory;
  /** Live objects gitfleet manages, by identity (hooks included). */
  readonly live: ReadonlyMap<string, JsonMap>;
  readonly health: (object: DesiredObject, live: JsonMap | undefined) => Health;
  /** The member's record for this app (any revision). */
  readonly record: HookRecord | undefined;
  readonly commit: string;
}

export interface AppPass {
  /** Objects left as they run this pass, and why. */
  readonly held: ReadonlyMap<string, Hold>;
  /** Hooks to start now. */
  readonly start: readonly HookRun[];
  /** Every hook of the rendering and how it stands (reported in status). */
  readonly hooks: readonly HookRun[];
  /** The record to keep; undefined for an app without hooks. */
  readonly record: HookRecord | undefined;
  /** What the app left behind may be pruned this pass. */
  readonly prune: boolean;
  /** Something is in progress: the controller should come back soon. */
  readonly waiting: boolean;
}

/** Whether a hook's object has finished, from its live object: Jobs and Pods by their status, other kinds by health. */
export function hookOutcomeOf(live: JsonMap, health: Health): { outcome: HookOutcome; message?: string } {
  if (live.kind === "Job" && String(live.apiVersion).startsWith("batch/")) return jobOutcome(live);
  if (live.kind === "Pod" && live.apiVersion === "v1") return podOutcome(live);
  if (health.status === "Healthy") return { outcome: "Succeeded" };
  if (health.status === "Degraded")
    return { outcome: "Failed", ...(health.reason ? { message: health.reason } : {}) };
  return { outcome: "Running" };
}

function jobOutcome(live: JsonMap): { outcome: HookOutcome; message?: string } {
  const conditions = asList(asMap(live.status).conditions).map((c) => asMap(c));
  const failed = conditions.find((c) => c.type === "Failed" && c.status === "True");
  if (failed) return { outcome: "Failed", message: String(failed.message ?? failed.reason ?? "job failed") };
  const complete = conditions.some((c) => c.type === "Complete" && c.status === "True");
  return { outcome: complete ? "Succeeded" : "Running" };
}

function podOutcome(live: JsonMap): { outcome: HookOutcome; message?: string } {
  const phase = asMap(live.status).phase;
  if (phase === "Succeeded") return { outcome: "Succeeded" };
  if (phase === "Failed")
    return { outcome: "Failed", message: String(asMap(live.status).message ?? "pod failed") };
  return { outcome: "Running" };
}

// Every hook run of the rendering, with its outcome: kept in the record, else read from its object.
function hookRuns(app: AppInCluster, view: PassView, record: HookRecord | undefined): HookRun[] {
  return app.hooks.flatMap((object) =>
    object.role.kind === "hook"
      ? object.role.hook.phases.map((phase) => hookRun(app, view, record, object, phase))
      : [],
  );
}

function hookRun(
  app: AppInCluster,
  view: PassView,
  record: HookRecord | undefined,
  object: DesiredObject,
  phase: HookPhase,
): HookRun {
  const base = { phase, object, wave: object.role.kind === "hook" ? object.role.wave : 0 };
  const key = hookKey(phase, object.identity);
  const kept = record?.outcomes[key];
  const message = record?.messages?.[key];
  if (kept) return { ...base, outcome: kept, ...(message ? { message } : {}) };
  const live = view.live.get(object.identity);
  const ran = asMap(asMap(live?.metadata).annotations)[HOOK_RUN_ANNOTATION];
  if (!live || ran !== hookRunValue(phase, app.revision)) return { ...base, outcome: "Pending" };
  return { ...base, ...hookOutcomeOf(live, view.health(object, live)) };
}

// The hooks of one phase to start now: the pending ones of the lowest wave not yet done.
function nextHooks(runs: readonly HookRun[]): HookRun[] {
  const open = runs.filter((r) => r.outcome !== "Succeeded");
  const lowest = Math.min(...open.map((r) => r.wave));
  return open.filter((r) => r.wave === lowest && r.outcome === "Pending");
}

const hookName = (run: HookRun) => `${run.phase} hook ${describeIdentity(run.object.identity)}`;

/** One pass of one app (see the module comment). */
export function planAppPass(app: AppInCluster, view: PassView): AppPass {
  const record = view.record?.revision === app.revision ? view.record : undefined;
  const runs = hookRuns(app, view, record);
  const base = { hooks: runs, record: keptRecord(app, view, record, runs) };
  const holdAll = (reason: string, by: Hold["by"]) =>
    new Map(app.objects.map((o) => [o.identity, { reason, by } satisfies Hold]));
  const failure = record?.failed ?? failedRun(runs);
  if (failure !== undefined) {
    const syncFail = runs.filter((r) => r.phase === "SyncFail");
    return {
      ...base,
      record: base.record ? { ...base.record, failed: failure } : undefined,
      held: holdAll(`${failure}; the objects stay as they run until a new commit`, "hook"),
      start: nextHooks(syncFail),
      prune: false,
      waiting: syncFail.some((r) => r.outcome === "Pending" || r.outcome === "Running"),
    };
  }
  const pre = runs.filter((r) => r.phase === "PreSync");
  const preOpen = pre.find((r) => r.outcome !== "Succeeded");
  if (preOpen)
    return {
      ...base,
      held: holdAll(`waiting for ${hookName(preOpen)}`, "hook"),
      start: nextHooks(pre),
      prune: false,
      waiting: true,
    };
  const waves = waveStep(app, view, runs);
  if (waves.wave !== undefined)
    return { ...base, held: waves.held, start: waves.start, prune: waves.prune, waiting: true };
  const post = runs.filter((r) => r.phase === "PostSync");
  const postOpen = post.some((r) => r.outcome !== "Succeeded");
  return { ...base, held: new Map(), start: postOpen ? nextHooks(post) : [], prune: true, waiting: postOpen };
}

// The record to keep for an app with hooks: its rendering, the commit that started it, the outcomes seen.
function keptRecord(
  app: AppInCluster,
  view: PassView,
  record: HookRecord | undefined,
  runs: readonly HookRun[],
): HookRecord | undefined {
  if (app.hooks.length === 0) return undefined;
  const outcomes = { ...(record?.outcomes ?? {}) };
  const messages = { ...(record?.messages ?? {}) };
  for (const run of runs) {
    const key = hookKey(run.phase, run.object.identity);
    if (run.outcome === "Succeeded" || run.outcome === "Failed") outcomes[key] = run.outcome;
    if (run.outcome === "Failed" && run.message) messages[key] = run.message;
  }
  return {
    revision: app.revision,
    commit: record?.commit ?? view.commit,
    outcomes,
    ...(Object.keys(messages).length > 0 ? { messages } : {}),
    ...(record?.failed ? { failed: record.failed } : {}),
  };
}

function failedRun(runs: readonly HookRun[]): string | undefined {
  const failed = runs.find((r) => r.outcome === "Failed" && r.phase !== "SyncFail");
  if (!failed) return undefined;
  return `${hookName(failed)} failed${failed.message ? `: ${failed.message}` : ""}`;
}

// The Sync phase: the first wave not yet applied and Healthy (with its Sync hooks done) is applied
// now, the waves after it wait. An app at its rendering holds no wave (drift is corrected at once).
function waveStep(
  app: AppInCluster,
  view: PassView,
  runs: readonly HookRun[],
): { wave?: number; held: Map<string, Hold>; start: HookRun[]; prune: boolean } {
  const sync = runs.filter((r) => r.phase === "Sync");
  const atRendering = app.objects.every((o) => holdsAsRendered(o, view.inventory.get(o.identity)?.digest));
  const waves = [...new Set([...app.objects.map(waveOf), ...sync.map((r) => r.wave)])].sort((a, b) => a - b);
  const done = (o: DesiredObject) => {
    const live = view.live.get(o.identity);
    return (
      holdsAsRendered(o, view.inventory.get(o.identity)?.digest) && view.health(o, live).status === "Healthy"
    );
  };
  const open = waves.find(
    (w) =>
      !app.objects.filter((o) => waveOf(o) === w).every(done) ||
      !sync.filter((r) => r.wave === w).every((r) => r.outcome === "Succeeded"),
  );
  // One wave and no hooks: applied and pruned in one pass, as any app.
  if (waves.length <= 1 && app.hooks.length === 0) return { held: new Map(), start: [], prune: true };
  if (open === undefined) return { held: new Map(), start: [], prune: true };
  // At its rendering: kept there as a whole; PostSync waits until every wave is Healthy.
  if (atRendering && sync.every((r) => r.outcome === "Succeeded"))
    return { wave: open, held: new Map(), start: [], prune: false };
  const held = new Map<string, Hold>();
  for (const o of app.objects)
    if (waveOf(o) > open)
      held.set(o.identity, {
        reason: `sync wave ${waveOf(o)} waits for wave ${open} to be Healthy`,
        by: "wave",
      });
  const start = sync.filter((r) => r.wave === open && r.outcome === "Pending");
  return { wave: open, held, start, prune: false };
}

const waveOf = (o: DesiredObject) => (o.role.kind === "skip" ? 0 : o.role.wave);
