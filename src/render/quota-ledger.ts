import { identityOf } from "../model/identity.js";
import type { InterpreterLookup } from "../model/interpreter-index.js";
import { podTemplateOf } from "../model/pod-template.js";
import { podAmounts, podsThatFit, quotaAmounts } from "../model/quota-amounts.js";
import type { FederatedResourceQuota } from "../model/quota-types.js";
import type { FleetModel } from "../model/types.js";
import type { QuotaCaps, ScheduleDecision } from "../schedule/types.js";
import type { WorkloadDecision } from "./render-result.js";

// What each FederatedResourceQuota's namespace uses while a render places its workloads one after
// another, in the render's fixed order (apps by name): a workload's room is the quota less what the
// workloads placed before it in this render hold, and what the workloads this render does not place
// (apps outside a scoped render) held last time. So the namespace never exceeds a limit, the
// workloads placed first are served first, and a scoped render — which renders every app sharing
// the namespace again (reconcile/affected-apps.ts) — sees what the others hold. Pure: built from the
// model and the last render.

/** The room a workload has under its namespace's quotas. */
export interface QuotaRoom {
  /** Per cluster with a static assignment, the most replicas it may hold there. */
  readonly caps: QuotaCaps | undefined;
  /** The most replicas it may hold across the fleet (the overall limits); Infinity when unlimited. */
  readonly total: number;
  /** The quota that bounds the total, for the decision's reason. */
  readonly totalBy: string | undefined;
}

/** A render's running account of quota usage. */
export interface QuotaLedger {
  /** The room a workload (by identity, with its pod template) has; undefined when no quota limits its namespace. */
  roomFor(identity: string, namespace: string | undefined, template: unknown): QuotaRoom | undefined;
  /** Records where the workload now runs (replicas per cluster). */
  charge(
    identity: string,
    namespace: string | undefined,
    template: unknown,
    counts: Readonly<Record<string, number>>,
  ): void;
}

// One quota's account: per resource the overall and per-cluster limits, what each workload uses.
interface Account {
  readonly quota: FederatedResourceQuota;
  readonly resources: readonly string[];
  readonly overall: ReadonlyMap<string, number>;
  readonly hard: ReadonlyMap<string, ReadonlyMap<string, number>>;
  readonly uses: Map<
    string,
    { readonly perPod: ReadonlyMap<string, number>; readonly counts: Readonly<Record<string, number>> }
  >;
}

/** A ledger for the model's quotas, opened with what the last render's workloads hold. */
export function quotaLedger(
  model: FleetModel,
  previous: readonly WorkloadDecision[],
  templateOf: (identity: string) => unknown,
  placedAgain: (app: string) => boolean,
): QuotaLedger {
  const accounts = new Map<string, Account[]>();
  for (const quota of model.federatedResourceQuotas) {
    const namespace = quota.metadata.namespace ?? "";
    const hard = new Map(
      (quota.spec.staticAssignments ?? []).map((a) => [a.clusterName, quotaAmounts(a.hard)] as const),
    );
    const overall = quotaAmounts(quota.spec.overall);
    const account: Account = { quota, resources: [...overall.keys()], overall, hard, uses: new Map() };
    accounts.set(namespace, [...(accounts.get(namespace) ?? []), account]);
  }
  const ledger: QuotaLedger = {
    roomFor: (identity, namespace, template) => {
      const limits = accounts.get(namespace ?? "");
      return limits ? roomIn(limits, identity, template) : undefined;
    },
    charge: (identity, namespace, template, counts) => {
      for (const account of accounts.get(namespace ?? "") ?? [])
        account.uses.set(identity, { perPod: podAmounts(template, account.resources), counts });
    },
  };
  if (accounts.size === 0) return ledger;
  for (const decision of previous) {
    const namespace = namespaceOf(decision.identity);
    if (!accounts.has(namespace) || placedAgain(decision.app)) continue;
    const template = templateOf(decision.identity);
    if (template !== undefined)
      ledger.charge(decision.identity, namespace, template, decision.decision.clusters);
  }
  return ledger;
}

function roomIn(accounts: readonly Account[], identity: string, template: unknown): QuotaRoom {
  const caps: Record<string, number> = {};
  const by: string[] = [];
  let total = Number.POSITIVE_INFINITY;
  let totalBy: string | undefined;
  for (const account of accounts) {
    const name = `FederatedResourceQuota ${account.quota.metadata.namespace}/${account.quota.metadata.name}`;
    const perPod = podAmounts(template, account.resources);
    const fits = podsThatFit(left(account.overall, usedBy(account, identity)), perPod);
    if (fits < total) {
      total = fits;
      totalBy = name;
    }
    for (const [cluster, hard] of account.hard) {
      const cap = podsThatFit(left(hard, usedBy(account, identity, cluster)), perPod);
      if (cap === Number.POSITIVE_INFINITY || cap >= (caps[cluster] ?? Number.POSITIVE_INFINITY)) continue;
      caps[cluster] = cap;
      if (!by.includes(name)) by.push(name);
    }
  }
  return { caps: by.length > 0 ? { caps, by: by.join(" and ") } : undefined, total, totalBy };
}

// What the other workloads use, across the fleet or in one cluster.
function usedBy(account: Account, except: string, cluster?: string): Map<string, number> {
  const used = new Map<string, number>();
  for (const [identity, use] of account.uses) {
    if (identity === except) continue;
    let replicas = 0;
    if (cluster === undefined) for (const count of Object.values(use.counts)) replicas += count;
    else replicas = use.counts[cluster] ?? 0;
    if (replicas === 0) continue;
    for (const [resource, each] of use.perPod)
      used.set(resource, (used.get(resource) ?? 0) + each * replicas);
  }
  return used;
}

function left(limits: ReadonlyMap<string, number>, used: ReadonlyMap<string, number>): Map<string, number> {
  return new Map([...limits].map(([resource, limit]) => [resource, limit - (used.get(resource) ?? 0)]));
}

// group/kind/namespace/name → namespace.
function namespaceOf(identity: string): string {
  return identity.split("/")[2] ?? "";
}

// Replicas a quota's overall limits leave no room for are unschedulable, and the decision says why.
export function overQuota(
  decision: ScheduleDecision,
  excess: number,
  by: string | undefined,
): ScheduleDecision {
  const reason = `${excess} replicas over ${by}'s overall limits`;
  const before = decision.diagnosis.unschedulableReason;
  return {
    ...decision,
    unschedulable: decision.unschedulable + excess,
    diagnosis: { ...decision.diagnosis, unschedulableReason: before ? `${before}; ${reason}` : reason },
  };
}

export function countsOf(clusters: ReadonlyMap<string, number | undefined>): Record<string, number> {
  return Object.fromEntries([...clusters].map(([name, count]) => [name, count ?? 0]));
}

// The pod templates of the workloads in namespaces a quota limits, by identity, found when asked.
export function templatesIn(
  model: FleetModel,
  interpreterFor: InterpreterLookup,
): (identity: string) => unknown {
  let templates: Map<string, unknown> | undefined;
  return (identity) => {
    if (!templates) {
      const limited = new Set(model.federatedResourceQuotas.map((q) => q.metadata.namespace));
      templates = new Map();
      for (const resource of model.apps.flatMap((app) => app.resources))
        if (resource.namespace !== undefined && limited.has(resource.namespace))
          templates.set(
            identityOf(resource.group, resource.kind, resource.namespace, resource.name),
            podTemplateOf(resource, interpreterFor),
          );
    }
    return templates.get(identity);
  };
}
