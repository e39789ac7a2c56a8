import { type HostedControlPlane, resolveControlPlanes } from "../model/controlplane/hosted-control-plane.js";
import { identityOf } from "../model/identity.js";
import { compareVersions, format, parseGitVersion, parseKubeVersion } from "../model/kube-version.js";
import type { FleetModel } from "../model/types.js";
import type { Hold } from "./sync-result.js";

/** The components that follow kube-apiserver in a version change (never newer than it). */
const FOLLOWERS = ["kube-controller-manager", "kube-scheduler"] as const;

/**
 * The order within one hosted control plane when its version changes: kube-apiserver first, then —
 * only once the hosted cluster's /version reports the API server's new version — kube-controller-manager
 * and kube-scheduler. Until then their Deployments in the host are held as they run (the skew policy
 * never lets them be newer than the API server). A control plane whose version was never observed
 * (one being created) holds nothing. Per host: the held objects by identity, and why. Pure.
 */
export function controlPlaneHolds(
  model: FleetModel,
  host: string,
  observedVersion: (cluster: string) => string | undefined,
): Map<string, Hold> {
  const held = new Map<string, Hold>();
  for (const { plane } of resolveControlPlanes(model, host)) {
    const reason = waitingFor(plane, observedVersion(plane.cluster));
    if (!reason) continue;
    for (const component of FOLLOWERS)
      held.set(identityOf("apps", "Deployment", plane.namespace, component), { reason, by: "control-plane" });
  }
  return held;
}

// Why the followers wait, or undefined when the API server reports the version they may follow.
function waitingFor(plane: HostedControlPlane, observed: string | undefined): string | undefined {
  const target = parseKubeVersion(plane.apiServer.version);
  const reported = observed === undefined ? undefined : parseGitVersion(observed);
  if (!target || !reported || compareVersions(reported, target) === 0) return undefined;
  return `waiting for kube-apiserver of ${plane.cluster} to report ${format(target)} (it reports ${format(reported)})`;
}
