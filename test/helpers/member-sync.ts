import { asMap, type JsonMap } from "../../src/apimachinery/json.js";
import { syncCluster } from "../../src/kube/cluster-sync.js";
import type { ClusterSyncInput } from "../../src/kube/cluster-sync-input.js";
import { MemberClient } from "../../src/kube/member-client.js";
import { syncRoleOf } from "../../src/model/sync-annotations.js";
import { memberClientConfig } from "../../src/sim/kubeconfig.js";
import type { SimulatedMember } from "../../src/sim/member-server.js";
import type { DesiredObject } from "../../src/sync/desired-objects.js";
import { textDigest } from "../../src/sync/inventory.js";
import type { PruneSettings } from "../../src/sync/prune-plan.js";

/** A DesiredObject as the sync takes it: gitfleet's tracking labels, a digest, a policy. */
export function desiredObject(
  object: JsonMap,
  app = "web",
  policy: Partial<DesiredObject["policy"]> = {},
): DesiredObject {
  const metadata = asMap(object.metadata);
  const apiVersion = String(object.apiVersion);
  const group = apiVersion.includes("/") ? apiVersion.split("/")[0] : "";
  const labels = {
    ...asMap(metadata.labels),
    "app.kubernetes.io/managed-by": "gitfleet",
    "gitfleet.io/app": app,
  };
  const withLabels = { ...object, metadata: { ...metadata, labels } };
  return {
    identity: `${group}/${String(object.kind)}/${String(metadata.namespace ?? "")}/${String(metadata.name)}`,
    app,
    object: withLabels,
    role: syncRoleOf(asMap(metadata.annotations)),
    digest: textDigest(JSON.stringify(withLabels)),
    policy: { force: false, adopt: false, selfHeal: true, ...policy },
  };
}

/** A ConfigMap of an app in namespace shop. */
export const appConfigMap = (name: string, app: string, policy: Partial<DesiredObject["policy"]> = {}) =>
  desiredObject(
    { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "shop" }, data: { v: name } },
    app,
    policy,
  );

/** Syncs one simulated member as cluster `cluster`, at a source commit, with prune settings. */
export function syncMember(
  member: SimulatedMember,
  objects: readonly DesiredObject[],
  options: {
    readonly sourceCommit?: string;
    readonly prune?: PruneSettings;
    readonly cluster?: string;
  } & Partial<ClusterSyncInput> = {},
) {
  const { sourceCommit = "c".repeat(40), prune, cluster = member.name, ...extra } = options;
  return syncCluster({
    cluster,
    client: new MemberClient(cluster, memberClientConfig(member), {
      retries: 1,
      backoffMs: 10,
      timeoutMs: 2000,
    }),
    sourceCommit,
    desired: objects,
    prune: prune ?? { maxDeletionPercent: 30, allowedTokens: new Set(), appPrunes: () => true },
    knownInventory: new Map(),
    ...extra,
  });
}
