import type { Finding } from "../reporter.js";
import type { MetricSpec, MetricTarget, Migration, Origin, Placement } from "../types.js";
import type { RuleContext } from "./rule.js";

type Report = (origin: Origin, path: Finding["path"], message: string) => void;

/** Rules that span fields of one object: exclusive fields, min ≤ max, options that only apply in some modes. */
export function checkFieldCombinations({ model, reporter }: RuleContext): void {
  const report: Report = (origin, path, message) =>
    reporter.report({ origin, path, code: "INVALID_FIELD_COMBINATION", message });
  for (const placement of model.placements) {
    checkSpread(placement, report);
    checkReplicaScheduling(placement, report);
    checkOverflow(placement, report);
    checkTolerations(placement.origin, placement.spec.tolerations ?? [], report);
  }
  for (const { origin, spec } of model.clusters) {
    if (spec.connection?.kubeconfigFile !== undefined && spec.connection.kubeconfigEnv !== undefined) {
      report(
        origin,
        ["spec", "connection", "kubeconfigEnv"],
        "set kubeconfigFile or kubeconfigEnv, not both",
      );
    }
  }
  for (const { origin, spec } of model.federatedHPAs) {
    if (spec.minReplicas !== undefined && spec.minReplicas > spec.maxReplicas) {
      report(
        origin,
        ["spec", "minReplicas"],
        `minReplicas (${spec.minReplicas}) must not exceed maxReplicas (${spec.maxReplicas})`,
      );
    }
    for (const [i, metric] of (spec.metrics ?? []).entries())
      checkMetric(origin, metric, ["spec", "metrics", i], report);
  }
  for (const migration of model.migrations) checkMigrationBatches(migration, report);
}

// The block a metric's type names, the target types it takes, and the field each target type needs.
const METRIC_BLOCKS = {
  Resource: { block: "resource", targets: ["Utilization", "AverageValue"] },
  Pods: { block: "pods", targets: ["AverageValue"] },
  Object: { block: "object", targets: ["Value", "AverageValue"] },
  External: { block: "external", targets: ["Value", "AverageValue"] },
} as const;
const TARGET_FIELDS = {
  Utilization: "averageUtilization",
  AverageValue: "averageValue",
  Value: "value",
} as const;

function checkMetric(origin: Origin, metric: MetricSpec, path: Finding["path"], report: Report): void {
  const { block, targets } = METRIC_BLOCKS[metric.type];
  const body = (metric as unknown as Record<string, { target?: MetricTarget } | undefined>)[block];
  if (!body) {
    report(origin, path, `${article(metric.type)} ${metric.type} metric needs ${block}`);
    return;
  }
  const extra = Object.values(METRIC_BLOCKS).find((b) => b.block !== block && b.block in metric);
  if (extra)
    report(origin, [...path, extra.block], `a ${metric.type} metric takes ${block}, not ${extra.block}`);
  const target = body.target;
  if (!target) return;
  if (!(targets as readonly string[]).includes(target.type))
    report(
      origin,
      [...path, block, "target", "type"],
      `${article(metric.type)} ${metric.type} metric's target is ${targets.join(" or ")}, not ${target.type}`,
    );
  else if (target[TARGET_FIELDS[target.type]] === undefined)
    report(
      origin,
      [...path, block, "target"],
      `target type ${target.type} needs ${TARGET_FIELDS[target.type]}`,
    );
}

function article(word: string): string {
  return /^[AEIOU]/.test(word) ? "an" : "a";
}

// An app may migrate in several batches (test, then staging, then prod) but never twice in one cluster.
function checkMigrationBatches({ origin, spec }: Migration, report: Report): void {
  const claimed: { app: string; batch: string; clusters: readonly string[] | undefined }[] = [];
  spec.batches.forEach((batch, i) => {
    if (spec.batches.findIndex((b) => b.name === batch.name) < i) {
      report(
        origin,
        ["spec", "batches", i, "name"],
        `batch name "${batch.name}" is used twice; batch names must be unique`,
      );
    }
    batch.apps.forEach((app, j) => {
      const overlap = claimed.find((c) => c.app === app && clustersOverlap(c.clusters, batch.clusters));
      if (overlap) {
        const message = `app "${app}" already migrates in batch "${overlap.batch}" on ${overlap.clusters ? "some of the same clusters" : "every cluster"}; give the batches disjoint clusters`;
        report(origin, ["spec", "batches", i, "apps", j], message);
      }
      claimed.push({ app, batch: batch.name, clusters: batch.clusters });
    });
  });
}

// No cluster list means every cluster, which overlaps with anything.
function clustersOverlap(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === undefined || b === undefined) return true;
  return a.some((cluster) => b.includes(cluster));
}

// Overflow tiers replace clusterAffinity (a tier names its clusters) and divide a total: Divided only,
// each tier named once.
function checkOverflow({ origin, spec }: Placement, report: Report): void {
  const overflow = spec.overflow;
  if (!overflow) return;
  if (spec.clusterAffinity)
    report(
      origin,
      ["spec", "overflow"],
      "set clusterAffinity or overflow, not both: each tier names its clusters",
    );
  const divided =
    spec.replicaScheduling !== undefined && (spec.replicaScheduling.type ?? "Divided") === "Divided";
  if (!divided)
    report(
      origin,
      ["spec", "overflow"],
      "overflow tiers divide a total: they need replicaScheduling type Divided",
    );
  overflow.tiers.forEach((tier, i) => {
    if (overflow.tiers.findIndex((t) => t.name === tier.name) < i)
      report(origin, ["spec", "overflow", "tiers", i, "name"], `tier name "${tier.name}" is used twice`);
  });
}

function checkSpread({ origin, spec }: Placement, report: Report): void {
  const seen = new Set<string>();
  spec.spreadConstraints?.forEach((constraint, i) => {
    const path = ["spec", "spreadConstraints", i];
    const by =
      constraint.spreadByField ??
      (constraint.spreadByLabel === undefined ? undefined : `label:${constraint.spreadByLabel}`);
    if ((constraint.spreadByField === undefined) === (constraint.spreadByLabel === undefined)) {
      report(origin, path, "set exactly one of spreadByField and spreadByLabel");
    }
    if (
      constraint.minGroups !== undefined &&
      constraint.maxGroups !== undefined &&
      constraint.minGroups > constraint.maxGroups
    ) {
      report(
        origin,
        [...path, "minGroups"],
        `minGroups (${constraint.minGroups}) must not exceed maxGroups (${constraint.maxGroups})`,
      );
    }
    if (by !== undefined && seen.has(by))
      report(origin, path, `a second spread constraint on ${by}; keep one per field or label`);
    if (by !== undefined) seen.add(by);
  });
}

function checkReplicaScheduling({ origin, spec }: Placement, report: Report): void {
  const scheduling = spec.replicaScheduling;
  if (!scheduling) return;
  const path = ["spec", "replicaScheduling"];
  const divided = (scheduling.type ?? "Divided") === "Divided";
  const onlyDivided = ["divisionPreference", "weightPreference", "clusterLimits", "avoidDisruption"] as const;
  for (const field of onlyDivided) {
    if (!divided && scheduling[field] !== undefined)
      report(origin, [...path, field], `${field} applies only to type Divided`);
  }
  const weights = scheduling.weightPreference;
  if (weights?.staticWeightList !== undefined && weights.dynamicWeight !== undefined) {
    report(
      origin,
      [...path, "weightPreference", "dynamicWeight"],
      "set staticWeightList or dynamicWeight, not both",
    );
  }
  if (scheduling.divisionPreference === "Aggregated" && weights !== undefined) {
    report(
      origin,
      [...path, "weightPreference"],
      "weightPreference applies only to divisionPreference Weighted",
    );
  }
  scheduling.clusterLimits?.forEach((limit, i) => {
    if (
      limit.minReplicas !== undefined &&
      limit.maxReplicas !== undefined &&
      limit.minReplicas > limit.maxReplicas
    ) {
      report(
        origin,
        [...path, "clusterLimits", i, "minReplicas"],
        `minReplicas (${limit.minReplicas}) must not exceed maxReplicas (${limit.maxReplicas})`,
      );
    }
  });
}

function checkTolerations(
  origin: Origin,
  tolerations: NonNullable<Placement["spec"]["tolerations"]>,
  report: Report,
): void {
  tolerations.forEach((toleration, i) => {
    const path = ["spec", "tolerations", i];
    if (toleration.operator === "Exists" && toleration.value !== undefined) {
      report(origin, [...path, "value"], "operator Exists matches any value; remove value");
    }
    if ((toleration.operator ?? "Equal") === "Equal" && (toleration.key ?? "") === "") {
      report(origin, path, "operator Equal needs a key; use operator Exists to tolerate every taint");
    }
    if (toleration.tolerationSeconds !== undefined && toleration.effect !== "NoExecute") {
      report(origin, [...path, "tolerationSeconds"], "tolerationSeconds applies only to effect NoExecute");
    }
  });
}
