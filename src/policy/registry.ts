import { smallest } from "../model/extremes.js";
import type { StatusWriter } from "../status/layout.js";
import type { StatusEvent } from "../status/status-message.js";
import { migrationsPolicy } from "./migrations.js";
import type { Policy, PolicyGives, PolicyRound, RoundInput } from "./policy.js";
import { restoresPolicy } from "./restores.js";
import { upgradesPolicy } from "./upgrades.js";

/**
 * Every policy, in the order a round advances them (and a commit's message names their steps):
 * migrations first — their gates decide what the sync may do — then the hosted control planes'
 * upgrades and restores. Adding a policy is its state machine, its file here and one line below.
 */
export const POLICIES: readonly Policy[] = [migrationsPolicy, upgradesPolicy, restoresPolicy];

/** The status writers that are policies. */
export const POLICY_WRITERS: readonly StatusWriter[] = POLICIES.map((policy) => policy.writer);

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
