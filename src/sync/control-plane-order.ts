import { compareVersions, format, parseGitVersion, parseKubeVersion } from "../apimachinery/kube-version.js";
import { imageOf } from "../manifests/controlplane/pod-template.js";
import { type HostedControlPlane, resolveControlPlanes } from "../model/controlplane/hosted-control-plane.js";
import { identityOf } from "../model/identity.js";
import type { FleetModel, HostedPlaneStates } from "../model/types.js";
import type { Hold } from "./sync-result.js";

/** The components that follow kube-apiserver in a version change (never newer than it). */
const FOLLOWERS = ["kube-controller-manager", "kube-scheduler"] as const;

/** A live etcd StatefulSet as the host reports it: the image it runs, and whether its rollout is done. */
export interface EtcdRollout {
  readonly image: string | undefined;
  /** Every replica updated to the current revision and ready. */
  readonly settled: boolean;
}

/** What the order reads of a host and its hosted clusters. */
export interface ControlPlaneObservations {
  /** A hosted cluster's /version (gitVersion) as last seen; undefined when never seen. */
  readonly version: (cluster: string) => string | undefined;
  /** A live etcd StatefulSet by namespace and name; undefined when it does not exist (yet). */
  readonly etcd?: (namespace: string, name: string) => EtcdRollout | undefined;
}

/**
 * The order within one hosted control plane when its versions change: etcd first — kube-apiserver
 * is held as it runs while its etcd's StatefulSet runs another image than the rendered one or has
 * not finished rolling; then kube-apiserver; then — only once the hosted cluster's /version reports
 * the API server's new version — kube-controller-manager and kube-scheduler (the skew policy never
 * lets them be newer than the API server) in the host, and kube-proxy in the hosted cluster itself
 * (synced through its API server; the other addons follow by themselves). A control plane being
 * created (no etcd yet, no version seen) holds nothing. Per cluster synced — a host, or a hosted
 * cluster — the held objects by identity, and why. Pure.
 */
export function controlPlaneHolds(
  model: FleetModel,
  host: string,
  observed: ControlPlaneObservations,
  planes?: HostedPlaneStates,
): Map<string, Hold> {
  const held = new Map<string, Hold>();
  const own = ownPlane(model, host, planes);
  const proxyWait = own && waitingFor(own, observed.version(own.cluster));
  if (proxyWait) held.set(KUBE_PROXY, { reason: proxyWait, by: "control-plane" });
  for (const { plane } of resolveControlPlanes(model, host, planes)) {
    const etcdWait = waitingForEtcd(plane, observed);
    if (etcdWait)
      held.set(identityOf("apps", "Deployment", plane.namespace, "kube-apiserver"), {
        reason: etcdWait,
        by: "control-plane",
      });
    const reason = waitingFor(plane, observed.version(plane.cluster));
    if (!reason) continue;
    for (const component of FOLLOWERS)
      held.set(identityOf("apps", "Deployment", plane.namespace, component), { reason, by: "control-plane" });
  }
  return held;
}

/** kube-proxy's DaemonSet in a hosted cluster, which follows its API server's version. */
const KUBE_PROXY = identityOf("apps", "DaemonSet", "kube-system", "kube-proxy");

// The control plane of a hosted cluster, as its host resolves it (undefined: not hosted).
function ownPlane(
  model: FleetModel,
  cluster: string,
  planes: HostedPlaneStates | undefined,
): HostedControlPlane | undefined {
  const host = model.clusters.find((c) => c.metadata.name === cluster)?.spec.controlPlane?.host;
  if (host === undefined) return undefined;
  return resolveControlPlanes(model, host, planes).find((entry) => entry.plane.cluster === cluster)?.plane;
}

/** The etcd StatefulSet a control plane stores its data in: its namespace and name. */
export function etcdOf(plane: HostedControlPlane): { readonly namespace: string; readonly name: string } {
  return { namespace: plane.etcd.namespace, name: plane.etcd.name };
}

// Why kube-apiserver waits for its etcd, or undefined when etcd runs the rendered image, settled.
function waitingForEtcd(plane: HostedControlPlane, observed: ControlPlaneObservations): string | undefined {
  const { namespace, name } = etcdOf(plane);
  const live = observed.etcd?.(namespace, name);
  if (!live) return undefined;
  const rendered = imageOf(plane, "etcd", plane.etcd.version);
  if (live.image !== undefined && live.image !== rendered)
    return `waiting for etcd ${namespace}/${name} to run ${tagOf(rendered)} (it runs ${tagOf(live.image)})`;
  if (!live.settled) return `waiting for etcd ${namespace}/${name} to finish rolling out`;
  return undefined;
}

function tagOf(image: string): string {
  return image.slice(image.lastIndexOf(":") + 1);
}

// Why the followers wait, or undefined when the API server reports the version they may follow.
function waitingFor(plane: HostedControlPlane, observed: string | undefined): string | undefined {
  const target = parseKubeVersion(plane.apiServer.version);
  const reported = observed === undefined ? undefined : parseGitVersion(observed);
  if (!target || !reported || compareVersions(reported, target) === 0) return undefined;
  return `waiting for kube-apiserver of ${plane.cluster} to report ${format(target)} (it reports ${format(reported)})`;
}
