import type { RoundOutcome } from "../autoscale/autoscaling-round.js";
import type { HpaSamples } from "../autoscale/hpa-algorithm.js";
import type { Gate } from "../migrate/migration-state.js";
import type { ObservedReplicas } from "../model/observed-state.js";
import type { EventKind } from "../model/trailers.js";
import type { FleetModel, RestoreOverlay } from "../model/types.js";
import type { RenderResult } from "../render/render-result.js";
import type { StatusWriter } from "../status/layout.js";
import type { AgentReport } from "../status/observed-status.js";
import type { StatusEvent } from "../status/status-message.js";
import type { ClusterSyncResult } from "../sync/sync-result.js";

/**
 * A feature that remembers between rounds (a Migration's batches, a control-plane upgrade, an etcd
 * restore) is a policy: a pure state machine over statuses it keeps in a directory of its own on the
 * status branch. Once a round, after the reconcile, it is advanced with what the members reported;
 * it returns its statuses (the files the next status commit carries), the steps it took (typed
 * events for that commit's message), whether it wants the members looked at again soon and when it
 * wants to run again, and what it gives the render and the sync. The round keeps nothing else of it.
 */

/** What a round hands every policy: the fleet as rendered, what the branch records, what the members report. */
export interface RoundInput {
  readonly model: FleetModel;
  readonly render: RenderResult;
  /** The source commit the render is of. */
  readonly renderedCommit: string;
  /** The files of the branch's writers beside the reconcile (status/migrations/, status/upgrades/ …), by path. */
  readonly files: ReadonlyMap<string, string>;
  /** False when the branch was rebuilt from commits gitfleet cannot vouch for: its files are taken only as far as the source approves them. */
  readonly trusted: boolean;
  /** Every member's latest sync, by cluster. */
  readonly results: ReadonlyMap<string, ClusterSyncResult>;
  /** Pull-mode agents' reports, by cluster. */
  readonly reports: ReadonlyMap<string, AgentReport>;
  readonly now: number;
}

/** What policies give the rest of the round: the sync's gates, the render's control-plane versions and restores. */
export interface PolicyGives {
  /** Per cluster, per app: what the sync may do (migrations). */
  readonly gates?: ReadonlyMap<string, ReadonlyMap<string, Gate>>;
  /** Per hosted cluster, the version its control plane renders at (upgrades). */
  readonly controlPlaneVersions?: ReadonlyMap<string, string>;
  /** Per hosted cluster, where its etcd restore stands (restores). */
  readonly controlPlaneRestores?: ReadonlyMap<string, RestoreOverlay>;
  /** Per workload, the totals, distributions and held divisions the autoscalers decided (autoscaling). */
  readonly scaling?: Pick<RoundOutcome, "autoscaled" | "distributed" | "held">;
}

/** One step of a policy's state machine: S its status per object, M what it remembers besides (in memory only). */
export interface StepInput<S, M> extends RoundInput {
  /** Each object's last status: the last round's, else the branch's (vouched for). */
  readonly previous: ReadonlyMap<string, S>;
  /** What the last round remembered besides its statuses; undefined after a start. */
  readonly memory: M | undefined;
}

export interface StepOutcome<S, M> {
  /** Every status the policy keeps, by name (those of objects no longer in the fleet included, when it keeps them). */
  readonly statuses: ReadonlyMap<string, S>;
  /** The steps taken, as lines for the commit message (the policy's kind is added). */
  readonly steps: readonly string[];
  /** Something is under way: the members should be looked at again soon. */
  readonly active: boolean;
  /** When (ms) the policy next decides differently with no new report. */
  readonly wakeAt: number | undefined;
  readonly gives: PolicyGives;
  readonly memory: M;
}

/** A policy as its author writes it: its codec, its trust rule and its step, all pure. */
export interface PolicySpec<S, M> {
  /** The status branch's writer it is (status/layout.ts): its directory is its own. */
  readonly writer: StatusWriter;
  /** The kind of event its steps are. */
  readonly kind: EventKind;
  /** The names of its objects in the fleet (the statuses written as files); none: it does not run. */
  names(model: FleetModel): readonly string[];
  /** Its statuses as the branch holds them, by name (a file that does not read is skipped). */
  read(files: ReadonlyMap<string, string>): Map<string, S>;
  /** A status as its file: path and text, byte-stable. */
  write(name: string, status: S): readonly [string, string];
  /** The part of a recorded status the source approves, for a branch gitfleet cannot vouch for. */
  vouch(model: FleetModel, name: string, recorded: S): S | undefined;
  step(input: StepInput<S, M>): StepOutcome<S, M>;
  /** What statuses alone give (before the first round after a start, and when no object of it is in the fleet). */
  gives(model: FleetModel, statuses: ReadonlyMap<string, S>): PolicyGives;
}

/** A policy's round: what it carries to the next one stays opaque to the registry and the controller. */
export interface PolicyRound {
  readonly writer: StatusWriter;
  /** Its files, by path: what the next status commit carries. */
  readonly files: ReadonlyMap<string, string>;
  readonly events: readonly StatusEvent[];
  readonly active: boolean;
  readonly wakeAt: number | undefined;
  readonly gives: PolicyGives;
  /** Its own, handed back to it next round. */
  readonly carry: unknown;
}

/** A policy as the registry holds it, its types closed over. */
export interface Policy {
  readonly writer: StatusWriter;
  readonly kind: EventKind;
  /** One step; undefined when the fleet has no object of it. */
  advance(input: RoundInput, last: PolicyRound | undefined): PolicyRound | undefined;
  /** What the branch's statuses give, vouched for as the input says. */
  recorded(input: Pick<RoundInput, "model" | "files" | "trusted">): PolicyGives;
}

interface Carried<S, M> {
  readonly statuses: ReadonlyMap<string, S>;
  readonly memory: M;
}

/** A policy for the registry, from its spec: the untrusted-branch rule and the files applied here, once for all. */
export function definePolicy<S, M>(spec: PolicySpec<S, M>): Policy & { readonly spec: PolicySpec<S, M> } {
  const recordedStatuses = (input: Pick<RoundInput, "model" | "files" | "trusted">) => {
    const recorded = spec.read(input.files);
    if (input.trusted) return recorded;
    const vouched = new Map<string, S>();
    for (const [name, status] of recorded) {
      const part = spec.vouch(input.model, name, status);
      if (part !== undefined) vouched.set(name, part);
    }
    return vouched;
  };
  return {
    spec,
    writer: spec.writer,
    kind: spec.kind,
    recorded: (input) => spec.gives(input.model, recordedStatuses(input)),
    advance(input, last) {
      const names = spec.names(input.model);
      if (names.length === 0) return undefined;
      // Carried only from this policy's own last round (the registry hands each its own).
      const carried = last?.carry as Carried<S, M> | undefined;
      // The branch is read when an object has no status in memory yet (after a start, or a new one).
      const unknown = !carried || names.some((name) => !carried.statuses.has(name));
      const previous = new Map(unknown ? recordedStatuses(input) : []);
      for (const [name, status] of carried?.statuses ?? []) previous.set(name, status);
      const outcome = spec.step({ ...input, previous, memory: carried?.memory });
      const files = new Map<string, string>();
      for (const name of names) {
        const status = outcome.statuses.get(name);
        if (status === undefined) continue;
        const [path, text] = spec.write(name, status);
        files.set(path, text);
      }
      return {
        writer: spec.writer,
        files,
        events: outcome.steps.map((line) => ({ kind: spec.kind, line })),
        active: outcome.active,
        wakeAt: outcome.wakeAt,
        gives: outcome.gives,
        carry: { statuses: outcome.statuses, memory: outcome.memory } satisfies Carried<S, M>,
      };
    },
  };
}

/** The name a status file's path gives (`status/upgrades/<name>.yaml`); undefined for another path. */
export function nameAt(path: string, directory: string): string | undefined {
  if (!path.startsWith(directory) || !path.endsWith(".yaml")) return undefined;
  const name = path.slice(directory.length, -".yaml".length);
  return name === "" || name.includes("/") ? undefined : name;
}

/** The statuses of a directory's files, by the name each path gives; a file that does not parse is skipped. */
export function readNamed<S>(
  files: ReadonlyMap<string, string>,
  directory: string,
  parse: (text: string) => S | undefined,
): Map<string, S> {
  const statuses = new Map<string, S>();
  for (const [path, text] of files) {
    const name = nameAt(path, directory);
    const status = name === undefined ? undefined : parse(text);
    if (name !== undefined && status !== undefined) statuses.set(name, status);
  }
  return statuses;
}

/** What a batch policy's round function returns (its own outputs besides): statuses, step lines, whether something is under way, when it next decides. */
export interface BatchRound<S> {
  readonly statuses: ReadonlyMap<string, S>;
  /** A line per state change, for the commit message. */
  readonly changes: readonly string[];
  /** Something is under way: its members should be looked at again soon. */
  readonly active: boolean;
  /** The next time (ms) it decides differently with no new report. */
  readonly wakeAt: number | undefined;
}

/** A round function's outcome as a policy step: what it gives, and what it remembers. */
export function stepOutcome<S, M>(round: BatchRound<S>, gives: PolicyGives, memory: M): StepOutcome<S, M> {
  return {
    statuses: round.statuses,
    steps: round.changes,
    active: round.active,
    wakeAt: round.wakeAt,
    gives,
    memory,
  };
}

/**
 * What the round hands a policy that feeds its own render (autoscaling): advanced while the round's
 * observations are gathered, before the reconcile, so the render divides by what it decides; its
 * files ride with the reconcile's commit.
 */
export interface RenderRoundInput {
  readonly model: FleetModel;
  /** The last render's workload decisions. */
  readonly decisions: RenderResult["decisions"];
  /** The files of the branch's writers beside the reconcile, by path. */
  readonly files: ReadonlyMap<string, string>;
  /** Per workload and cluster, what the members (and agents) report running. */
  readonly workloads: ReadonlyMap<string, ReadonlyMap<string, ObservedReplicas>>;
  /** What the edge sampled from the members for this round (empty between samples). */
  readonly sampled: Sampled;
  readonly now: number;
  /** The least time between two changes of one workload's total (fleet.yaml autoscaleInterval, ms). */
  readonly intervalMs: number;
}

/** What the edge reads from the members for the autoscalers: pods' samples, and the replicas of members' own HPAs' targets. */
export interface Sampled {
  /** Per workload, its pods' samples per resource from every member it runs in (centralized FederatedHPAs). */
  readonly pods: ReadonlyMap<string, HpaSamples>;
  /** Per workload and cluster, the replicas the member runs (distributed FederatedHPAs). */
  readonly replicas: ReadonlyMap<string, ReadonlyMap<string, ObservedReplicas>>;
}

export const NOTHING_SAMPLED: Sampled = { pods: new Map(), replicas: new Map() };

/** A render policy's round. */
export interface RenderPolicyRound {
  readonly writer: StatusWriter;
  /** Its files as the round leaves them, by path (null: an object gone, its file removed). */
  readonly files: ReadonlyMap<string, string | null>;
  /** The steps it took this round. */
  readonly events: readonly StatusEvent[];
  readonly wakeAt: number | undefined;
  readonly gives: PolicyGives;
  /** Its own, handed back to it next round. */
  readonly carry: unknown;
}

/** A policy that feeds the render of its own round. */
export interface RenderPolicy {
  readonly writer: StatusWriter;
  readonly kind: EventKind;
  /** One step; undefined when it has nothing in the fleet and nothing on the branch. */
  advance(input: RenderRoundInput, last: RenderPolicyRound | undefined): RenderPolicyRound | undefined;
}
