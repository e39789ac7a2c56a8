import { sameRestores } from "../manifests/controlplane/generated-apps.js";
import { smallest } from "../model/extremes.js";
import { sameEntries } from "../model/same-entries.js";
import type { StatusWriter } from "../status/layout.js";
import type { StatusEvent } from "../status/status-message.js";
import { autoscalingPolicy } from "./autoscaling.js";
import { migrationsPolicy } from "./migrations.js";
import type {
  Policy,
  PolicyGives,
  PolicyRound,
  RenderPolicy,
  RenderPolicyRound,
  RenderRoundInput,
  RoundInput,
} from "./policy.js";
import { restoresPolicy } from "./restores.js";
import { upgradesPolicy } from "./upgrades.js";

/**
 * Every policy, in the order a round advances them (and a commit's message names their steps):
 * migrations first — their gates decide what the sync may do — then the hosted control planes'
 * upgrades and restores. Adding a policy is its state machine, its file here and one line below.
 */
export const POLICIES: readonly Policy[] = [migrationsPolicy, upgradesPolicy, restoresPolicy];

/**
 * The policies that feed their own round's render, advanced as the round's observations are
 * gathered (before the reconcile): autoscaling, whose totals the render divides.
 */
export const RENDER_POLICIES: readonly RenderPolicy[] = [autoscalingPolicy];

/** The status writers that are policies. */
export const POLICY_WRITERS: readonly StatusWriter[] = [...RENDER_POLICIES, ...POLICIES].map(
  (policy) => policy.writer,
);

/** Every policy advanced once: each one's round, and what they give and ask together. */
export interface PoliciesRound {
  /** Each policy's round, by writer; a policy with no object in the fleet has none. */
  readonly rounds: ReadonlyMap<StatusWriter, PolicyRound>;
  /** Every policy's files, by path: what the next status commit carries. */
  readonly files: ReadonlyMap<string, string>;
  /** The steps taken, in registry order. */
  readonly events: readonly StatusEvent[];
  /** Something is under way: the members should be looked at again soon. */
  readonly active: boolean;
  /** The earliest time (ms) a policy decides differently with no new report. */
  readonly wakeAt: number | undefined;
  /** What they give the render and the sync (a policy without a round gives what the branch records). */
  readonly gives: PolicyGives;
}

/** Advances every policy one step, each with its own last round. Pure. */
export function advancePolicies(input: RoundInput, last: PoliciesRound | undefined): PoliciesRound {
  const rounds = new Map<StatusWriter, PolicyRound>();
  const gives: PolicyGives[] = [];
  for (const policy of POLICIES) {
    const round = policy.advance(input, last?.rounds.get(policy.writer));
    if (round) rounds.set(policy.writer, round);
    gives.push(round ? round.gives : policy.recorded(input));
  }
  const all = [...rounds.values()];
  return {
    rounds,
    files: new Map(all.flatMap((round) => [...round.files])),
    events: all.flatMap((round) => round.events),
    active: all.some((round) => round.active),
    wakeAt: smallest(all.flatMap((round) => (round.wakeAt === undefined ? [] : [round.wakeAt]))),
    gives: Object.assign({}, ...gives) as PolicyGives,
  };
}

/**
 * What the policies give as the status branch records them, before a round advanced them: a
 * restarted controller's first render, and `gitfleet plan`. Pure.
 */
export function recordedGives(input: Pick<RoundInput, "model" | "files" | "trusted">): PolicyGives {
  return Object.assign({}, ...POLICIES.map((policy) => policy.recorded(input))) as PolicyGives;
}

/** Every render policy advanced once, with the steps no commit named yet. */
export interface RenderPoliciesRound {
  readonly rounds: ReadonlyMap<StatusWriter, RenderPolicyRound>;
  /** Their files as they stand, by path (null removes one). */
  readonly files: ReadonlyMap<string, string | null>;
  /** Steps since the last commit that carried their files, in registry order. */
  readonly unrecorded: readonly StatusEvent[];
  /** The earliest time (ms) one decides differently with no new sample. */
  readonly wakeAt: number | undefined;
  readonly gives: PolicyGives;
}

/** Advances every render policy one step, each with its own last round; steps pile up until a commit records them. Pure. */
export function advanceRenderPolicies(
  input: RenderRoundInput,
  last: RenderPoliciesRound | undefined,
): RenderPoliciesRound {
  const rounds = new Map<StatusWriter, RenderPolicyRound>();
  for (const policy of RENDER_POLICIES) {
    const round = policy.advance(input, last?.rounds.get(policy.writer));
    if (round) rounds.set(policy.writer, round);
  }
  const all = [...rounds.values()];
  return {
    rounds,
    files: new Map(all.flatMap((round) => [...round.files])),
    unrecorded: [...(last?.unrecorded ?? []), ...all.flatMap((round) => round.events)],
    wakeAt: smallest(all.flatMap((round) => (round.wakeAt === undefined ? [] : [round.wakeAt]))),
    gives: Object.assign({}, ...all.map((round) => round.gives)) as PolicyGives,
  };
}

/** The round once a commit carried its files and named its steps. */
export function recordedRound(round: RenderPoliciesRound): RenderPoliciesRound {
  return { ...round, unrecorded: [] };
}

/** What the next status commit carries of the render policies: their files that differ from the branch, and the steps no commit named. Pure. */
export function renderPoliciesCommit(
  round: RenderPoliciesRound | undefined,
  branch: ReadonlyMap<string, string>,
): { files: Map<string, string | null>; notes: string[] } {
  const files = new Map<string, string | null>();
  for (const [path, text] of round?.files ?? [])
    if ((branch.get(path) ?? null) !== text) files.set(path, text);
  return { files, notes: (round?.unrecorded ?? []).map((event) => event.line) };
}

/** What the policies give the render of hosted control planes: their versions and restores. */
export type ControlPlaneGives = Required<Pick<PolicyGives, "controlPlaneVersions" | "controlPlaneRestores">>;

/**
 * The hosted control planes' versions and restores the policies give: the last round's, or after a
 * start what the status branch records (of a branch gitfleet cannot vouch for, what the source asks
 * for). Pure.
 */
export function controlPlaneGives(
  round: PoliciesRound | undefined,
  branch: Pick<RoundInput, "model" | "files" | "trusted"> | undefined,
): ControlPlaneGives {
  const gives = round?.gives ?? (branch ? recordedGives(branch) : {});
  return {
    controlPlaneVersions: gives.controlPlaneVersions ?? new Map(),
    controlPlaneRestores: gives.controlPlaneRestores ?? new Map(),
  };
}

/** Whether the planes' versions or restores moved since a render used them: that render is stale. Pure. */
export function planesMoved(gives: ControlPlaneGives, used: Partial<ControlPlaneGives> | undefined): boolean {
  return (
    !sameEntries(gives.controlPlaneVersions, used?.controlPlaneVersions) ||
    !sameRestores(gives.controlPlaneRestores, used?.controlPlaneRestores)
  );
}
