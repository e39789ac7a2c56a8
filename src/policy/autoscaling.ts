import {
  type AutoscalingStatus,
  autoscalingRound,
  EMPTY_AUTOSCALING,
} from "../autoscale/autoscaling-round.js";
import { autoscalingFiles, readAutoscalingStatus } from "../status/autoscaling-files.js";
import type { RenderPolicy, RenderPolicyRound } from "./policy.js";

// Autoscaling as a policy that feeds its own round's render: CronScale rules, centralized and
// distributed FederatedHPAs and targeted scale-downs (autoscale/autoscaling-round.ts) advanced over
// what the edge sampled, before the reconcile — the render divides the totals they decide, and their
// files (status/autoscaling/) ride with that commit. Its trust rule is in the codec: every count read
// from the branch is bounded by what the reviewed source allows (status/autoscaling-files.ts), so a
// branch gitfleet cannot vouch for scales nothing past the review.

interface Carried {
  readonly status: AutoscalingStatus;
}

/** FederatedHPAs, CronScales and ScaleDownRequests (status/autoscaling/): the totals the render divides. */
export const autoscalingPolicy: RenderPolicy = {
  writer: "autoscaling",
  kind: "scale",
  advance(input, last): RenderPolicyRound | undefined {
    const { model, files, now } = input;
    const autoscalers = model.federatedHPAs.length + model.cronScales.length + model.scaleDownRequests.length;
    if (autoscalers === 0) {
      // Autoscalers gone: their files go too.
      const gone = autoscalingFiles(model, EMPTY_AUTOSCALING, files.keys());
      if (gone.size === 0) return undefined;
      return {
        writer: "autoscaling",
        files: gone,
        events: [],
        wakeAt: undefined,
        gives: {},
        carry: undefined,
      };
    }
    // The first round after a start (or after the autoscalers were gone) reads the branch.
    const previous = (last?.carry as Carried | undefined)?.status ?? readAutoscalingStatus(model, files, now);
    const members = new Map(input.workloads);
    for (const [identity, read] of input.sampled.replicas) members.set(identity, read);
    const outcome = autoscalingRound({
      model,
      decisions: input.decisions,
      samples: input.sampled.pods,
      members,
      previous,
      now,
      intervalMs: input.intervalMs,
    });
    const { autoscaled, distributed, held } = outcome;
    return {
      writer: "autoscaling",
      files: autoscalingFiles(model, outcome.status, files.keys()),
      events: outcome.notes.map((line) => ({ kind: "scale", line })),
      wakeAt: outcome.wakeAt,
      gives: { scaling: { autoscaled, distributed, held } },
      carry: { status: outcome.status } satisfies Carried,
    };
  },
};
