import type { Logger } from "pino";
import { NOTHING_SAMPLED, type PolicyGives, type RenderRoundInput } from "../policy/policy.js";
import {
  advanceRenderPolicies,
  type RenderPoliciesRound,
  recordedRound,
  renderPoliciesCommit,
} from "../policy/registry.js";
import type { ReconcileState } from "../reconcile/reconcile-step.js";
import { type AutoscalingSampler, DEFAULT_AUTOSCALE_INTERVAL_MS } from "./autoscaling-sampler.js";
import type { Attachment } from "./reconciler-options.js";

/**
 * The render policies (autoscaling) between rounds: advanced over what the sampler took once a round,
 * while the round's observations are gathered; what they give feeds that round's render, and their
 * files and steps ride with its commit — the steps until a commit carried them.
 */
export class RenderPolicies {
  private round: RenderPoliciesRound | undefined;

  constructor(
    private readonly sampler: AutoscalingSampler | undefined,
    private readonly logger: Logger,
  ) {}

  /** One step over this round's samples (each taken once), for the state the render starts from. */
  advance(
    state: ReconcileState,
    files: ReadonlyMap<string, string>,
    workloads: RenderRoundInput["workloads"],
    now: number,
  ): void {
    const { model, render } = state;
    if (!model) return;
    const sampled = this.sampler?.take() ?? NOTHING_SAMPLED;
    const intervalMs = this.sampler?.intervalMs ?? DEFAULT_AUTOSCALE_INTERVAL_MS;
    const input = { model, decisions: render.decisions, files, workloads, sampled, now, intervalMs };
    this.round = advanceRenderPolicies(input, this.round);
    for (const round of this.round.rounds.values())
      for (const { line } of round.events) this.logger.info({ autoscaling: line }, "autoscaling");
  }

  /** What they give the render (the autoscalers' totals, distributions and held divisions). */
  get gives(): PolicyGives {
    return this.round?.gives ?? {};
  }

  /** When one next decides differently with no new sample. */
  get wakeAt(): number | undefined {
    return this.round?.wakeAt;
  }

  /** What the next status commit carries of them, given the branch's files; their steps are done once it landed. */
  attachment(syncFiles: ReadonlyMap<string, string>): Attachment {
    return {
      ...renderPoliciesCommit(this.round, syncFiles),
      committed: () => {
        if (this.round) this.round = recordedRound(this.round);
      },
    };
  }
}
