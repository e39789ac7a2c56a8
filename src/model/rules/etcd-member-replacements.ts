import { memberNames } from "../controlplane/etcd-member-plan.js";
import { resolveControlPlane } from "../controlplane/hosted-control-plane.js";
import { suggest } from "../schema-problems.js";
import type { EtcdMemberReplacement } from "../types.js";
import type { RuleContext } from "./rule.js";

/**
 * An EtcdMemberReplacement must name a hosted cluster whose etcd has several members (one member
 * has no others to catch up from: that is a restore) and one of that etcd's members by its pod's
 * name.
 */
export function checkEtcdMemberReplacements(context: RuleContext): void {
  const { model, reporter } = context;
  const classes = new Map(model.controlPlaneClasses.map((c) => [c.metadata.name, c]));
  for (const request of model.etcdMemberReplacements) {
    const name = request.spec.cluster;
    const cluster = model.clusters.find((c) => c.metadata.name === name);
    if (!cluster?.spec.controlPlane) {
      const hosted = model.clusters.filter((c) => c.spec.controlPlane).map((c) => c.metadata.name);
      reporter.report({
        origin: request.origin,
        path: ["spec", "cluster"],
        code: "UNKNOWN_REFERENCE",
        message: cluster
          ? `cluster "${name}" is not hosted: gitfleet replaces members only of an etcd it runs`
          : `unknown hosted cluster "${name}"${suggest(name, hosted)}`,
      });
      continue;
    }
    // A cluster whose class is missing is reported by the hosted control planes' rule.
    const plane = resolveControlPlane(cluster, classes);
    if (!plane) continue;
    checkMember(context, request, plane.etcd);
  }
}

function checkMember(
  { reporter }: RuleContext,
  request: EtcdMemberReplacement,
  etcd: { readonly name: string; readonly namespace: string; readonly replicas: number },
): void {
  if (etcd.replicas < 2) {
    reporter.report({
      origin: request.origin,
      path: ["spec", "cluster"],
      code: "INVALID_FIELD_COMBINATION",
      message: `${request.spec.cluster}'s etcd ${etcd.namespace}/${etcd.name} has one member, with no others to catch up from: restore it from a snapshot (EtcdRestore) instead`,
    });
    return;
  }
  const members = memberNames(etcd);
  if (!members.includes(request.spec.member))
    reporter.report({
      origin: request.origin,
      path: ["spec", "member"],
      code: "UNKNOWN_REFERENCE",
      message: `etcd ${etcd.namespace}/${etcd.name} has no member "${request.spec.member}" (its members: ${members.join(", ")})${suggest(request.spec.member, members)}`,
    });
}
