import {
  compareVersions,
  format,
  type KubeVersion,
  minorDistance,
  parseEtcdVersion,
  parseKubeVersion,
} from "../../apimachinery/kube-version.js";
import type { FileTree } from "../file-tree.js";
import type { Problem } from "../problem.js";
import { createReporter } from "../reporter.js";
import type { FleetModel, HostedPlaneStates, Origin } from "../types.js";
import { parseSourceFile } from "../yaml-source.js";
import { type HostedControlPlane, resolveControlPlanes } from "./hosted-control-plane.js";

/**
 * What a change may not do to a running hosted control plane, judged against the revision the
 * clusters run (`base`): move kube-apiserver down a minor or up more than one (Kubernetes upgrades
 * one minor at a time and has no minor downgrade), or move an etcd that already holds data down a
 * minor. Each is an error at the line that asks for it, so the commit changes nothing. Pure.
 */
export function versionStepProblems(
  base: FleetModel | undefined,
  head: FleetModel,
  tree: FileTree,
  basePlanes?: HostedPlaneStates,
  headPlanes?: HostedPlaneStates,
): Problem[] {
  if (!base) return [];
  const before = planesOf(base, basePlanes);
  const reporter = createReporter();
  for (const [name, { plane, cluster, found }] of planesOf(head, headPlanes)) {
    const was = before.get(name)?.plane;
    if (!was) continue;
    const versionAt =
      cluster.spec.controlPlane?.version !== undefined
        ? { origin: cluster.origin, path: ["spec", "controlPlane", "version"] }
        : { origin: found.origin, path: ["spec", "version"] };
    const apiServer = apiServerStep(was, plane);
    if (apiServer) report(reporter, tree, versionAt, `${name}: ${apiServer}`);
    const etcd = etcdStep(was, plane);
    if (etcd)
      report(reporter, tree, { origin: found.origin, path: ["spec", "etcd", "version"] }, `${name}: ${etcd}`);
  }
  return reporter.problems;
}

function planesOf(
  model: FleetModel,
  states: HostedPlaneStates | undefined,
): Map<string, ReturnType<typeof resolveControlPlanes>[number]> {
  return new Map(resolveControlPlanes(model, undefined, states).map((entry) => [entry.plane.cluster, entry]));
}

function apiServerStep(was: HostedControlPlane, now: HostedControlPlane): string | undefined {
  const from = parseKubeVersion(was.apiServer.version);
  const to = parseKubeVersion(now.apiServer.version);
  if (!from || !to) return undefined;
  const distance = minorDistance(from, to);
  if (distance < 0)
    return `kube-apiserver ${format(from)} → ${format(to)} is a minor downgrade, which Kubernetes does not support; restore from an etcd snapshot instead`;
  if (distance > 1)
    return `kube-apiserver ${format(from)} → ${format(to)} skips ${distance - 1} minor${distance > 2 ? "s" : ""}; upgrade one minor at a time (${format(from)} → v${to.major}.${from.minor + 1}.x first)`;
  return undefined;
}

function etcdStep(was: HostedControlPlane, now: HostedControlPlane): string | undefined {
  const from = parseEtcdVersion(was.etcd.version);
  const to = parseEtcdVersion(now.etcd.version);
  if (!from || !to || was.etcd.name !== now.etcd.name || !minorDown(from, to)) return undefined;
  return `etcd ${was.etcd.version} → ${now.etcd.version} is a minor downgrade of an etcd that holds data, which etcd does not support`;
}

function minorDown(from: KubeVersion, to: KubeVersion): boolean {
  return compareVersions({ ...to, patch: 0, pre: "" }, { ...from, patch: 0, pre: "" }) < 0;
}

function report(
  reporter: ReturnType<typeof createReporter>,
  tree: FileTree,
  at: { origin: Origin; path: readonly (string | number)[] },
  message: string,
): void {
  const bytes = tree.get(at.origin.file);
  const source = bytes
    ? parseSourceFile(at.origin.file, bytes).documents.find((d) => d.index === at.origin.index)
    : undefined;
  if (source) reporter.register(source);
  reporter.report({ origin: at.origin, path: at.path, code: "INVALID_FIELD_COMBINATION", message });
}
