import { groupKind, isWorkloadKind } from "../../apimachinery/kinds.js";
import { indexInterpreters } from "../interpreter-index.js";
import type {
  CronScale,
  CronScaleRule,
  FederatedHPA,
  ObjectReference,
  Resource,
  ScaleDownRequest,
} from "../types.js";
import type { RuleContext } from "./rule.js";

/** FederatedHPA and CronScale targets must resolve to exactly one scalable template (or FederatedHPA). */
export function checkScaleTargets(context: RuleContext): void {
  const { model } = context;
  for (const hpa of model.federatedHPAs) resolveWorkload(context, hpa);
  for (const cron of model.cronScales) {
    const targetsHpa =
      cron.spec.scaleTargetRef.apiVersion === "gitfleet.io/v1alpha1" &&
      cron.spec.scaleTargetRef.kind === "FederatedHPA";
    if (targetsHpa) checkHpaTarget(context, cron);
    else resolveWorkload(context, cron);
    checkCronRules(context, cron, targetsHpa);
  }
  for (const request of model.scaleDownRequests) checkScaleDown(context, request);
}

// A targeted scale-down needs a target whose interpreter names the pods-to-delete field, and a cluster.
function checkScaleDown(context: RuleContext, request: ScaleDownRequest): void {
  const { model, reporter } = context;
  const target = resolveWorkload(context, request);
  if (target && !indexInterpreters(model)(target)?.spec.podsToDeletePath)
    reporter.report({
      origin: request.origin,
      path: ["spec", "scaleTargetRef", "kind"],
      code: "INVALID_FIELD_COMBINATION",
      message: `${target.kind} has no pods-to-delete field: targeted scale-down needs a ResourceInterpreter for ${target.apiVersion} ${target.kind} with podsToDeletePath (an OpenKruise CloneSet's is spec.scaleStrategy.podsToDelete)`,
    });
  if (!model.clusters.some((c) => c.metadata.name === request.spec.cluster))
    reporter.report({
      origin: request.origin,
      path: ["spec", "cluster"],
      code: "UNKNOWN_REFERENCE",
      message: `no Cluster "${request.spec.cluster}" under clusters/`,
    });
}

function resolveWorkload(
  context: RuleContext,
  object: FederatedHPA | CronScale | ScaleDownRequest,
): Resource | undefined {
  const { model, reporter } = context;
  const ref = object.spec.scaleTargetRef;
  const path = ["spec", "scaleTargetRef", "name"];
  const namespace = object.metadata.namespace;
  const candidates = model.apps
    .flatMap((app) => app.resources)
    .filter((r) => matchesRef(ref, r) && (namespace === undefined || r.namespace === namespace));
  const [target, second] = candidates;
  if (!target) {
    const scope = namespace === undefined ? "" : ` in namespace ${namespace}`;
    reporter.report({
      origin: object.origin,
      path,
      code: "UNKNOWN_REFERENCE",
      message: `no ${ref.kind} "${ref.name}" (apiVersion ${ref.apiVersion})${scope} in apps/`,
    });
    return undefined;
  }
  if (second) {
    const message = `${ref.kind} "${ref.name}" exists in namespaces ${candidates.map((c) => c.namespace).join(", ")}; set metadata.namespace to pick one`;
    reporter.report({ origin: object.origin, path, code: "UNKNOWN_REFERENCE", message });
    return undefined;
  }
  const interpreterFor = indexInterpreters(model);
  if (!isWorkloadKind(groupKind(target.group, target.kind), interpreterFor(target))) {
    const message = `${ref.kind} has no replica count gitfleet can scale; target a Deployment, StatefulSet, ReplicaSet, Job or a kind with a ResourceInterpreter replicasPath`;
    reporter.report({
      origin: object.origin,
      path: ["spec", "scaleTargetRef", "kind"],
      code: "INVALID_FIELD_COMBINATION",
      message,
    });
    return undefined;
  }
  return target;
}

function matchesRef(ref: ObjectReference, resource: Resource): boolean {
  return ref.apiVersion === resource.apiVersion && ref.kind === resource.kind && ref.name === resource.name;
}

function checkHpaTarget({ model, reporter }: RuleContext, cron: CronScale): void {
  const name = cron.spec.scaleTargetRef.name;
  if (model.federatedHPAs.some((hpa) => hpa.metadata.name === name)) return;
  reporter.report({
    origin: cron.origin,
    path: ["spec", "scaleTargetRef", "name"],
    code: "UNKNOWN_REFERENCE",
    message: `no FederatedHPA "${name}" under autoscaling/`,
  });
}

function checkCronRules({ reporter }: RuleContext, cron: CronScale, targetsHpa: boolean): void {
  cron.spec.rules.forEach((rule, i) => {
    const report = (path: (string | number)[], message: string) =>
      reporter.report({
        origin: cron.origin,
        path: ["spec", "rules", i, ...path],
        code: "INVALID_FIELD_COMBINATION",
        message,
      });
    if (cron.spec.rules.findIndex((r) => r.name === rule.name) < i)
      report(["name"], `rule name "${rule.name}" is used twice`);
    const mismatch = targetMismatch(rule, targetsHpa);
    if (mismatch) report(mismatch.path, mismatch.message);
    if ((rule.targetMinReplicas ?? 0) > (rule.targetMaxReplicas ?? Number.POSITIVE_INFINITY)) {
      report(["targetMinReplicas"], "targetMinReplicas must not exceed targetMaxReplicas");
    }
  });
}

// A FederatedHPA target takes bounds; a workload target takes a replica count.
function targetMismatch(
  rule: CronScaleRule,
  targetsHpa: boolean,
): { path: string[]; message: string } | undefined {
  const hasBounds = rule.targetMinReplicas !== undefined || rule.targetMaxReplicas !== undefined;
  if (targetsHpa && rule.targetReplicas !== undefined) {
    return {
      path: ["targetReplicas"],
      message: "a FederatedHPA target takes targetMinReplicas/targetMaxReplicas, not targetReplicas",
    };
  }
  if (targetsHpa && !hasBounds)
    return { path: [], message: "set targetMinReplicas or targetMaxReplicas for a FederatedHPA target" };
  if (!targetsHpa && hasBounds) {
    return {
      path: [],
      message: "targetMinReplicas/targetMaxReplicas apply only to a FederatedHPA target; use targetReplicas",
    };
  }
  if (!targetsHpa && rule.targetReplicas === undefined)
    return { path: [], message: "set targetReplicas for a workload target" };
  return undefined;
}
