/**
 * The annotations that order a sync inside an app: sync waves and hooks, gitfleet's own and the ones
 * Argo CD and Helm charts already carry, read as Argo CD reads them. gitfleet's annotation wins when
 * an object carries both. Pure.
 */

/** The phases a hook runs in, in order around the sync. */
export type HookPhase = "PreSync" | "Sync" | "PostSync" | "SyncFail";

export const HOOK_PHASES: readonly HookPhase[] = ["PreSync", "Sync", "PostSync", "SyncFail"];

/** When a hook's object is deleted: before the next one is made, once it succeeded, once it failed. */
export type HookDeletePolicy = "BeforeHookCreation" | "HookSucceeded" | "HookFailed";

const DELETE_POLICIES: readonly HookDeletePolicy[] = ["BeforeHookCreation", "HookSucceeded", "HookFailed"];

export const SYNC_WAVE_ANNOTATION = "gitfleet.io/sync-wave";
export const HOOK_ANNOTATION = "gitfleet.io/hook";
export const HOOK_DELETE_POLICY_ANNOTATION = "gitfleet.io/hook-delete-policy";
export const ARGO_SYNC_WAVE_ANNOTATION = "argocd.argoproj.io/sync-wave";
export const ARGO_HOOK_ANNOTATION = "argocd.argoproj.io/hook";
export const ARGO_HOOK_DELETE_POLICY_ANNOTATION = "argocd.argoproj.io/hook-delete-policy";
export const HELM_HOOK_ANNOTATION = "helm.sh/hook";
export const HELM_HOOK_WEIGHT_ANNOTATION = "helm.sh/hook-weight";
export const HELM_HOOK_DELETE_POLICY_ANNOTATION = "helm.sh/hook-delete-policy";
/** `Duplicated` on a workload: every cluster runs the count its template asks for, whatever the Placement divides. */
export const REPLICA_SCHEDULING_ANNOTATION = "gitfleet.io/replica-scheduling";

/** Helm's hooks that map onto a sync's phases (as Argo CD maps them); the others are not run. */
const HELM_PHASES: Readonly<Record<string, HookPhase>> = {
  "pre-install": "PreSync",
  "pre-upgrade": "PreSync",
  "post-install": "PostSync",
  "post-upgrade": "PostSync",
};
const HELM_DELETE_POLICIES: Readonly<Record<string, HookDeletePolicy>> = {
  "before-hook-creation": "BeforeHookCreation",
  "hook-succeeded": "HookSucceeded",
  "hook-failed": "HookFailed",
};

/** An object that is a hook: the phases it runs in and what deletes it. */
export interface HookSpec {
  readonly phases: readonly HookPhase[];
  /** Never empty: BeforeHookCreation when the object names none (Argo CD's and Helm's default). */
  readonly deletePolicies: readonly HookDeletePolicy[];
}

/** What the annotations make of one object: a hook, an object left out of the sync (Skip), or a plain object in a wave. */
export type SyncRole =
  | { readonly kind: "object"; readonly wave: number }
  | { readonly kind: "hook"; readonly wave: number; readonly hook: HookSpec }
  | { readonly kind: "skip" };

type Annotations = Readonly<Record<string, unknown>>;

const list = (value: unknown): string[] =>
  typeof value === "string"
    ? value
        .split(",")
        .map((v) => v.trim())
        .filter((v) => v !== "")
    : [];

// The first of the annotations the object carries.
function first(
  annotations: Annotations,
  keys: readonly string[],
): { key: string; value: string } | undefined {
  for (const key of keys) {
    const value = annotations[key];
    if (typeof value === "string") return { key, value };
  }
  return undefined;
}

/** The object's sync wave (default 0); an unreadable one counts as 0 (validation reports it). */
export function syncWaveOf(annotations: Annotations): number {
  const wave = first(annotations, [SYNC_WAVE_ANNOTATION, ARGO_SYNC_WAVE_ANNOTATION]);
  const weight = wave ?? first(annotations, [HELM_HOOK_WEIGHT_ANNOTATION]);
  const value = weight ? Number(weight.value.trim()) : 0;
  return Number.isSafeInteger(value) && weight && /^\s*[-+]?[0-9]+\s*$/.test(weight.value) ? value : 0;
}

/** What one object is in a sync, by its annotations. */
export function syncRoleOf(annotations: Annotations | undefined): SyncRole {
  const notes = annotations ?? {};
  const wave = syncWaveOf(notes);
  const own = first(notes, [HOOK_ANNOTATION, ARGO_HOOK_ANNOTATION]);
  if (own) {
    const values = list(own.value);
    if (values.includes("Skip")) return { kind: "skip" };
    const phases = HOOK_PHASES.filter((p) => values.includes(p));
    if (phases.length === 0) return { kind: "object", wave };
    const policies = list(
      first(notes, [HOOK_DELETE_POLICY_ANNOTATION, ARGO_HOOK_DELETE_POLICY_ANNOTATION])?.value,
    );
    return {
      kind: "hook",
      wave,
      hook: { phases, deletePolicies: deletePolicies(policies, DELETE_POLICIES) },
    };
  }
  const helm = list(first(notes, [HELM_HOOK_ANNOTATION])?.value);
  if (helm.length === 0) return { kind: "object", wave };
  const phases = HOOK_PHASES.filter((p) => helm.some((h) => HELM_PHASES[h] === p));
  // Helm hooks with no sync phase (test, pre-delete, rollback…) are not run, as Argo CD leaves them.
  if (phases.length === 0) return { kind: "skip" };
  const policies = list(first(notes, [HELM_HOOK_DELETE_POLICY_ANNOTATION])?.value).map(
    (p) => HELM_DELETE_POLICIES[p] ?? p,
  );
  return { kind: "hook", wave, hook: { phases, deletePolicies: deletePolicies(policies, DELETE_POLICIES) } };
}

function deletePolicies(
  values: readonly string[],
  known: readonly HookDeletePolicy[],
): readonly HookDeletePolicy[] {
  const chosen = known.filter((p) => values.includes(p));
  return chosen.length > 0 ? chosen : ["BeforeHookCreation"];
}

/** True when the object runs once per cluster: a hook, or a workload annotated Duplicated. */
export function notDivided(annotations: Annotations | undefined): boolean {
  const notes = annotations ?? {};
  return syncRoleOf(notes).kind !== "object" || notes[REPLICA_SCHEDULING_ANNOTATION] === "Duplicated";
}

/** A finding about one annotation: which key and why its value cannot be used. */
export interface AnnotationProblem {
  readonly key: string;
  readonly message: string;
}

/** Why the ordering annotations of an object cannot be read as written (none when they can). */
export function explainSyncAnnotations(annotations: Annotations | undefined): AnnotationProblem[] {
  const notes = annotations ?? {};
  return [
    ...waveProblems(notes),
    ...hookProblems(notes),
    ...policyProblems(notes),
    ...schedulingProblems(notes),
  ];
}

function waveProblems(notes: Annotations): AnnotationProblem[] {
  return [SYNC_WAVE_ANNOTATION, ARGO_SYNC_WAVE_ANNOTATION, HELM_HOOK_WEIGHT_ANNOTATION]
    .filter((key) => notes[key] !== undefined)
    .filter((key) => typeof notes[key] !== "string" || !/^\s*[-+]?[0-9]{1,9}\s*$/.test(String(notes[key])))
    .map((key) => ({
      key,
      message: `${key} must be a whole number such as "-1", "0" or "5", not ${JSON.stringify(notes[key])}`,
    }));
}

function hookProblems(notes: Annotations): AnnotationProblem[] {
  return [HOOK_ANNOTATION, ARGO_HOOK_ANNOTATION].flatMap((key) =>
    list(notes[key])
      .filter((v) => v !== "Skip" && !HOOK_PHASES.includes(v as HookPhase))
      .map((value) => ({
        key,
        message: `${key}: "${value}" is not a hook gitfleet runs; use PreSync, Sync, PostSync, SyncFail or Skip${DELETION_HOOKS.has(value) ? " (deletion hooks are not supported)" : ""}`,
      })),
  );
}

const DELETION_HOOKS = new Set(["PreDelete", "PostDelete"]);

function policyProblems(notes: Annotations): AnnotationProblem[] {
  return [HOOK_DELETE_POLICY_ANNOTATION, ARGO_HOOK_DELETE_POLICY_ANNOTATION].flatMap((key) =>
    list(notes[key])
      .filter((v) => !DELETE_POLICIES.includes(v as HookDeletePolicy))
      .map((value) => ({
        key,
        message: `${key}: "${value}" is not a delete policy; use BeforeHookCreation, HookSucceeded or HookFailed`,
      })),
  );
}

function schedulingProblems(notes: Annotations): AnnotationProblem[] {
  const value = notes[REPLICA_SCHEDULING_ANNOTATION];
  if (value === undefined || value === "Duplicated") return [];
  return [
    {
      key: REPLICA_SCHEDULING_ANNOTATION,
      message: `${REPLICA_SCHEDULING_ANNOTATION} can only be "Duplicated" (every cluster runs the count its template asks for), not ${JSON.stringify(value)}`,
    },
  ];
}
