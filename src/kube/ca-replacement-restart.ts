import { asMap, type JsonMap } from "../apimachinery/json.js";
import { issuedAt, readCertificate } from "../credentials/x509.js";
import { REPLACED_FOR_KEY } from "../manifests/controlplane/pki-layout.js";
import { controlPlaneLabels, type HostedControlPlane } from "../model/controlplane/hosted-control-plane.js";
import type { MemberClient } from "./member-client.js";

/** The components whose pods hold, from their start, what the cluster's CAs signed. */
const RESTARTED = ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"] as const;

/** The most pods of one control plane read per pass. */
const MAX_PODS = 100;

/** A control-plane pod as the restart decides on it. */
export interface ComponentPod {
  readonly name: string;
  readonly uid: string;
  readonly component: string;
  /** creationTimestamp, epoch ms (NaN when it does not parse). */
  readonly createdAt: number;
  /** Already going (a deletionTimestamp): not deleted again. */
  readonly deleting?: boolean;
}

/**
 * The pods to restart once the cluster's CAs were replaced for the replaceCAs `token`: those of its
 * components created before the replacement (`replacedAt`, when the new cluster CA was issued;
 * creation times count in whole seconds, so a pod of the same second is restarted too), and not
 * already going. Nothing while no token is asked for, or while the CA Secret was not (yet) replaced
 * for this one. A pod whose time does not parse is left. Pure.
 */
export function podsToRestart(
  token: string | undefined,
  ca: { readonly replacedFor: string | undefined; readonly replacedAt: number | undefined },
  pods: readonly ComponentPod[],
): ComponentPod[] {
  if (token === undefined || ca.replacedFor !== token || ca.replacedAt === undefined) return [];
  const replacedAt = ca.replacedAt;
  return pods.filter(
    (pod) =>
      (RESTARTED as readonly string[]).includes(pod.component) &&
      pod.createdAt <= replacedAt &&
      !pod.deleting,
  );
}

/**
 * After replaceCAs, the running components still hold what the old CAs signed, loaded when they
 * started (kube-controller-manager's and kube-scheduler's kubeconfigs, kube-apiserver's etcd client,
 * etcd's peers): they would be refused by the new CAs until restarted. So once the CA Secret records
 * the replacement for the Cluster's token, each component pod created before it is deleted, by uid,
 * for its Deployment or StatefulSet to start again with the new Secrets. A later pass finds only
 * pods created after it: nothing more is deleted, and a controller that stopped between the
 * replacement and the restart restarts them on its next pass. Returns the pods deleted.
 */
export async function restartAfterCaReplacement(
  client: MemberClient,
  plane: HostedControlPlane,
  caData: Readonly<Record<string, string>> | undefined,
): Promise<string[]> {
  const token = plane.certificates.replaceCAs;
  if (token === undefined || caData?.[REPLACED_FOR_KEY] !== token) return [];
  const certificate = readCertificate(caData?.["tls.crt"] ?? "");
  const ca = {
    replacedFor: caData[REPLACED_FOR_KEY],
    replacedAt: certificate ? issuedAt(certificate) : undefined,
  };
  const selector = Object.entries(controlPlaneLabels(plane))
    .map(([key, value]) => `${key}=${value}`)
    .join(",");
  const pods: ComponentPod[] = [];
  await client.pages(
    "v1",
    "Pod",
    {
      namespace: plane.namespace,
      labelSelector: `${selector},app.kubernetes.io/component in (${RESTARTED.join(",")})`,
      limit: MAX_PODS,
    },
    (items) => {
      for (const item of items) if (pods.length < MAX_PODS) pods.push(componentPod(item));
    },
  );
  const restarted: string[] = [];
  for (const pod of podsToRestart(token, ca, pods)) {
    const outcome = await client.delete(
      { apiVersion: "v1", kind: "Pod", namespace: plane.namespace, name: pod.name },
      pod.uid,
    );
    if (outcome === "deleted") restarted.push(pod.name);
  }
  return restarted.sort();
}

function componentPod(item: JsonMap): ComponentPod {
  const metadata = asMap(item.metadata);
  return {
    name: String(metadata.name ?? ""),
    uid: String(metadata.uid ?? ""),
    component: String(asMap(metadata.labels)["app.kubernetes.io/component"] ?? ""),
    createdAt: Date.parse(String(metadata.creationTimestamp ?? "")),
    deleting: metadata.deletionTimestamp !== undefined,
  };
}
