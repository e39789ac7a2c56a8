import { targetOf } from "../autoscale/autoscale-step.js";
import type { FileTree } from "../model/file-tree.js";
import { identityOf } from "../model/identity.js";
import { indexInterpreters } from "../model/interpreter-index.js";
import { podTemplateOf } from "../model/pod-template.js";
import type { Problem } from "../model/problem.js";
import { formatAmount, milliOf, podAmounts, quotaAmounts } from "../model/quota-amounts.js";
import type { FederatedResourceQuota } from "../model/quota-types.js";
import type { FleetModel, Resource } from "../model/types.js";
import { readReplicas } from "../model/workload-replicas.js";
import type { RenderResult, WorkloadDecision } from "../render/render-result.js";
import { locateInTree } from "./replicas-under-autoscalers.js";

// Before merge, what a namespace's workloads ask for is checked against its FederatedResourceQuotas'
// overall limits, as Karmada's admission checks a binding: replicas × each pod's requests (or
// limits), summed over the clusters the render sends them to (a Duplicated workload counts once per
// cluster). An autoscaled workload counts at its FederatedHPA's minReplicas, the floor its quota must
// hold; above it, the scheduler keeps the total within the limits. An error is said at the file that
// grows the usage: with a base, the workloads whose usage grew (or the quota, when its limit fell);
// without one, every workload that counts. Pure.

/** One revision: its model and its render. */
export interface QuotaRevision {
  readonly model: FleetModel;
  readonly render: RenderResult;
}

/** Errors for each quota the head's workloads would exceed; `tree` is the head's, for locations. */
export function quotaProblems(
  base: QuotaRevision | undefined,
  head: QuotaRevision,
  tree: FileTree,
): Problem[] {
  if (head.model.federatedResourceQuotas.length === 0) return [];
  const before = base ? demands(base) : undefined;
  const after = demands(head);
  const problems: Problem[] = [];
  for (const quota of head.model.federatedResourceQuotas) {
    const namespace = quota.metadata.namespace ?? "";
    const uses = after.get(namespace) ?? [];
    const limits = quotaAmounts(quota.spec.overall);
    for (const [resource, limit] of limits) {
      const total = sum(uses, resource);
      if (total <= limit) continue;
      const context = { quota, resource, total, limit, uses, tree };
      problems.push(...located(context, before?.get(namespace), previousLimit(base, quota, resource)));
    }
  }
  return problems;
}

/** What one workload asks of its namespace's quotas. */
interface Use {
  readonly identity: string;
  readonly resource: Resource;
  readonly describe: string;
  /** Replicas counted: the template's (or the FederatedHPA's minReplicas), times the clusters when Duplicated. */
  readonly replicas: number;
  readonly perPod: ReadonlyMap<string, number>;
  /** Where the template's count is written. */
  readonly replicasPath: readonly string[];
}

interface Exceeded {
  readonly quota: FederatedResourceQuota;
  readonly resource: string;
  readonly total: number;
  readonly limit: number;
  readonly uses: readonly Use[];
  readonly tree: FileTree;
}

function located(
  context: Exceeded,
  before: readonly Use[] | undefined,
  previous: number | undefined,
): Problem[] {
  const { quota, resource, uses, tree } = context;
  const message = describe(context);
  const grown = before
    ? uses.filter(
        (use) =>
          amount(use, resource) >
          amount(
            before.find((b) => b.identity === use.identity),
            resource,
          ),
      )
    : uses.filter((use) => amount(use, resource) > 0);
  const problems: Problem[] = grown.map((use) => ({
    ...locateInTree(tree, use.resource.origin, use.replicasPath),
    severity: "error",
    code: "QUOTA_EXCEEDED",
    message: `${message}; ${use.describe} ${before ? "grows it to" : "uses"} ${formatAmount(resource, amount(use, resource))}`,
  }));
  const lowered = previous === undefined || previous > context.limit;
  if (problems.length === 0 || (before && lowered))
    problems.push({
      ...locateInTree(tree, quota.origin, ["spec", "overall", resource]),
      severity: "error",
      code: "QUOTA_EXCEEDED",
      message,
    });
  return problems;
}

function describe({ quota, resource, total, limit, uses }: Exceeded): string {
  const name = `FederatedResourceQuota ${quota.metadata.name} (${quota.origin.file})`;
  const parts = uses
    .filter((use) => amount(use, resource) > 0)
    .sort((a, b) => amount(b, resource) - amount(a, resource))
    .map(
      (use) =>
        `${use.describe} ${formatAmount(resource, amount(use, resource))} (${use.replicas} × ${formatAmount(resource, use.perPod.get(resource) ?? 0)})`,
    );
  const shown = parts.length > 5 ? [...parts.slice(0, 5), `${parts.length - 5} more`] : parts;
  return `namespace ${quota.metadata.namespace} would use ${resource} ${formatAmount(resource, total)} across the fleet, over ${name}'s overall ${formatAmount(resource, limit)}: ${shown.join(", ")}`;
}

// Per namespace a quota limits, what each workload the render places there asks for.
function demands({ model, render }: QuotaRevision): Map<string, Use[]> {
  const limited = limitedResources(model);
  const resources = new Map(
    model.apps
      .flatMap((app) => app.resources)
      .filter((r) => r.namespace !== undefined && limited.has(r.namespace))
      .map((r) => [identityOf(r.group, r.kind, r.namespace, r.name), r] as const),
  );
  const floors = autoscalerFloors(model);
  const interpreterFor = indexInterpreters(model);
  const placements = new Map(model.placements.map((p) => [p.metadata.name, p]));
  const out = new Map<string, Use[]>();
  for (const decision of render.decisions) {
    const resource = resources.get(decision.identity);
    if (!resource?.namespace) continue;
    const template = podTemplateOf(resource, interpreterFor);
    const asked = floors.get(decision.identity) ?? readReplicas(resource, interpreterFor);
    const placement = placements.get(decision.placement)?.spec.replicaScheduling;
    const divided = placement !== undefined && (placement.type ?? "Divided") === "Divided";
    const use: Use = {
      identity: decision.identity,
      resource,
      describe: decision.resource,
      replicas: divided ? asked : asked * copies(decision),
      perPod: podAmounts(template, limited.get(resource.namespace) ?? []),
      replicasPath: countPath(resource, interpreterFor(resource)?.spec.replicasPath),
    };
    out.set(resource.namespace, [...(out.get(resource.namespace) ?? []), use]);
  }
  return out;
}

// Per namespace, the resources its quotas limit.
function limitedResources(model: FleetModel): Map<string, Set<string>> {
  const limited = new Map<string, Set<string>>();
  for (const quota of model.federatedResourceQuotas) {
    const set = limited.get(quota.metadata.namespace ?? "") ?? new Set<string>();
    for (const resource of Object.keys(quota.spec.overall)) set.add(resource);
    limited.set(quota.metadata.namespace ?? "", set);
  }
  return limited;
}

// The clusters a Duplicated workload is copied to.
function copies(decision: WorkloadDecision): number {
  return decision.decision.diagnosis.selected.length;
}

// A FederatedHPA's target counts at its minReplicas.
function autoscalerFloors(model: FleetModel): Map<string, number> {
  return new Map(model.federatedHPAs.map((hpa) => [targetOf(model, hpa), hpa.spec.minReplicas ?? 1]));
}

function previousLimit(
  base: QuotaRevision | undefined,
  quota: FederatedResourceQuota,
  resource: string,
): number | undefined {
  const old = base?.model.federatedResourceQuotas.find(
    (q) => q.metadata.name === quota.metadata.name && q.metadata.namespace === quota.metadata.namespace,
  );
  const value = old?.spec.overall[resource];
  return value === undefined ? undefined : milliOf(value);
}

function countPath(resource: Resource, declared: string | undefined): string[] {
  if (resource.group === "batch" && resource.kind === "Job") return ["spec", "parallelism"];
  return (declared ?? "spec.replicas").split(".");
}

function amount(use: Use | undefined, resource: string): number {
  return use ? use.replicas * (use.perPod.get(resource) ?? 0) : 0;
}

function sum(uses: readonly Use[], resource: string): number {
  let total = 0;
  for (const use of uses) total += amount(use, resource);
  return total;
}
