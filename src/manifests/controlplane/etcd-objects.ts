import type { JsonMap } from "../../apimachinery/json.js";
import { memberNames } from "../../model/controlplane/etcd-member-plan.js";
import {
  ETCD_VOLUME_DIR,
  type HostedControlPlane,
  restoredDataDir,
} from "../../model/controlplane/hosted-control-plane.js";
import type { Labels } from "../../model/types.js";
import { componentArgs } from "./component-args.js";
import { controlPlaneEndpoints, ETCD_CLIENT_PORT, ETCD_PEER_PORT, etcdMetricsPort } from "./endpoints.js";
import { fetchedSnapshotDir, withOffHostFetch, withOffHostPush, withSnapshotPrune } from "./off-host-pods.js";
import {
  BACKUP_STORE_SECRET,
  credentialPlaceholders,
  ETCDCTL_TLS,
  PKI_DIR,
  PKI_SECRETS,
  pkiVolume,
} from "./pki-layout.js";
import { type ContainerSpec, imageOf, jobPodTemplate, podTemplate } from "./pod-template.js";

const VOLUME_DIR = ETCD_VOLUME_DIR;

/** A dedicated etcd, in the control plane's own namespace: StatefulSet, headless Service, backups. */
export function dedicatedEtcdObjects(plane: HostedControlPlane): JsonMap[] {
  return [...etcdObjects(plane, { "gitfleet.io/hosted-cluster": plane.cluster })];
}

/**
 * A shared etcd in its own namespace of the host (every hosted cluster using it keeps its data under
 * its own prefix): Namespace, StatefulSet, headless Service, backups. `plane` is any of the clusters
 * sharing it (validation makes sure they agree on host and etcd settings).
 */
export function sharedEtcdObjects(plane: HostedControlPlane): JsonMap[] {
  const labels = { "gitfleet.io/shared-etcd": plane.etcd.name };
  return [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: plane.etcd.namespace, labels: { ...labels } } },
    ...etcdObjects(plane, labels),
  ];
}

function etcdObjects(plane: HostedControlPlane, owner: Labels): JsonMap[] {
  const { etcd } = plane;
  const labels = { ...owner, "app.kubernetes.io/component": "etcd" };
  const hostPort = etcd.hostPort;
  const client = hostPort ?? ETCD_CLIENT_PORT;
  const peer = hostPort === undefined ? ETCD_PEER_PORT : hostPort + 1;
  const metrics = etcdMetricsPort(etcd);
  const peerHost = (pod: string) =>
    hostPort === undefined
      ? `${pod}.${etcd.name}.${etcd.namespace}.svc`
      : (plane.expose.address ?? "127.0.0.1");
  const members = memberNames(etcd);
  const replicated = etcd.replicas > 1;
  const container: ContainerSpec = {
    name: "etcd",
    image: imageOf(plane, "etcd", etcd.version),
    command: ["etcd"],
    args: componentArgs(
      {
        "advertise-client-urls": `https://${peerHost("$(POD_NAME)")}:${client}`,
        "cert-file": `${PKI_DIR}/etcd/server.crt`,
        "client-cert-auth": "true",
        "data-dir": etcd.dataDir,
        "initial-advertise-peer-urls": `https://${peerHost("$(POD_NAME)")}:${peer}`,
        "initial-cluster": members.map((m) => `${m}=https://${peerHost(m)}:${peer}`).join(","),
        // A replicated etcd's members read it from the host's ConfigMap <etcd>-members instead: "new"
        // (etcd's default) until they formed the etcd, then "existing", so that a member replaced onto
        // an empty volume joins the others (model/controlplane/etcd-member-plan.ts).
        ...(replicated ? {} : { "initial-cluster-state": "new" }),
        "initial-cluster-token": `${etcd.namespace}-${etcd.name}`,
        "key-file": `${PKI_DIR}/etcd/server.key`,
        "listen-client-urls": `https://0.0.0.0:${client}`,
        "listen-metrics-urls": `http://0.0.0.0:${metrics}`,
        "listen-peer-urls": `https://0.0.0.0:${peer}`,
        name: "$(POD_NAME)",
        "peer-cert-file": `${PKI_DIR}/etcd/server.crt`,
        "peer-client-cert-auth": "true",
        "peer-key-file": `${PKI_DIR}/etcd/server.key`,
        "peer-trusted-ca-file": `${PKI_DIR}/etcd/ca.crt`,
        ...(etcd.quotaBytes === undefined
          ? {}
          : { "quota-backend-bytes": String(Math.floor(etcd.quotaBytes)) }),
        "snapshot-count": "10000",
        "trusted-ca-file": `${PKI_DIR}/etcd/ca.crt`,
      },
      {},
    ),
    env: [
      { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
      ...(replicated
        ? [
            {
              name: "ETCD_INITIAL_CLUSTER_STATE",
              valueFrom: {
                configMapKeyRef: {
                  name: etcdMembersConfigMap(etcd.name),
                  key: INITIAL_STATE_KEY,
                  optional: true,
                },
              },
            },
          ]
        : []),
    ],
    ports: [
      { name: "client", containerPort: client },
      { name: "peer", containerPort: peer },
      { name: "metrics", containerPort: metrics },
    ],
    // Ready while it serves reads: a NOSPACE alarm (writes refused, reads served) does not take every
    // member out of its Service and the repair's count at once, as it would for /health alone.
    readiness: { path: "/health?exclude=NOSPACE&serializable=true", port: metrics, scheme: "HTTP" },
    requests: { cpu: "100m", memory: "256Mi" },
    volumeMounts: [
      { name: "data", mountPath: VOLUME_DIR },
      { name: "pki", mountPath: PKI_DIR, readOnly: true },
    ],
  };
  const statefulSet: JsonMap = {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name: etcd.name, namespace: etcd.namespace, labels: { ...labels } },
    spec: {
      replicas: plane.stopped ? 0 : etcd.replicas,
      serviceName: etcd.name,
      podManagementPolicy: "Parallel",
      selector: { matchLabels: { ...labels } },
      template: podTemplate(plane, labels, container, [pkiVolume("pki", [PKI_SECRETS.etcdServer])]),
      volumeClaimTemplates: [
        {
          metadata: { name: "data" },
          spec: {
            accessModes: ["ReadWriteOnce"],
            ...(etcd.storageClassName ? { storageClassName: etcd.storageClassName } : {}),
            resources: { requests: { storage: etcd.storage } },
          },
        },
      ],
    },
  };
  const service: JsonMap = {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: etcd.name, namespace: etcd.namespace, labels: { ...labels } },
    spec: {
      clusterIP: "None",
      publishNotReadyAddresses: true,
      selector: { ...labels },
      ports: [
        { name: "client", port: client, targetPort: "client", protocol: "TCP" },
        { name: "peer", port: peer, targetPort: "peer", protocol: "TCP" },
      ],
    },
  };
  const credentials = credentialPlaceholders(etcd.namespace, owner, [
    PKI_SECRETS.etcdCa,
    PKI_SECRETS.etcdServer,
    ...(etcd.backup.offHost ? [BACKUP_STORE_SECRET] : []),
  ]);
  // A restore: one Job per member, each restoring the snapshot into its own volume under its own
  // name, with the whole membership (etcdutl gives every member its ID from it, as a new etcd would).
  const restoring = plane.restore?.phase === "Restoring" ? plane.restore : undefined;
  const initialCluster = members.map((m) => `${m}=https://${peerHost(m)}:${peer}`).join(",");
  const restore = restoring
    ? members.map((member, ordinal) =>
        restoreJob(plane, owner, {
          job: replicated ? `etcd-restore-${restoring.name}-${ordinal}` : `etcd-restore-${restoring.name}`,
          name: restoring.name,
          snapshot: restoring.snapshot,
          fromBackup: restoring.backup !== undefined,
          member,
          peerUrl: `https://${peerHost(member)}:${peer}`,
          initialCluster,
          token: `${etcd.namespace}-${etcd.name}`,
        }),
      )
    : [];
  return [
    service,
    statefulSet,
    ...credentials,
    ...backupObjects(plane, owner),
    ...defragObjects(plane, owner),
    ...restore,
  ];
}

/** The host ConfigMap gitfleet keeps a replicated etcd's member IDs and initial-cluster-state in. */
export function etcdMembersConfigMap(etcd: string): string {
  return `${etcd}-members`;
}

/** The key of that ConfigMap the members' ETCD_INITIAL_CLUSTER_STATE comes from. */
export const INITIAL_STATE_KEY = "initial-cluster-state";
/** The key of <etcd>-members listing the EtcdMemberReplacements carried out (comma-separated names). */
export const REPLACED_KEY = "replaced";

/** The name of the volume etcd snapshots are written to, in the etcd's namespace. */
export const BACKUP_CLAIM = "etcd-backup";

/**
 * Scheduled snapshots: a CronJob whose pod runs `etcdctl snapshot save` into the backup volume, one
 * file per run named after the pod (the etcd image has no shell, so the name comes from the
 * downward API). Never two at once; a missed run is not caught up.
 */
function backupObjects(plane: HostedControlPlane, owner: Labels): JsonMap[] {
  const { etcd } = plane;
  const labels = { ...owner, "app.kubernetes.io/component": "etcd-backup" };
  const endpoint = controlPlaneEndpoints(plane).etcdServers[0] as string;
  const container: ContainerSpec = {
    name: "snapshot",
    image: imageOf(plane, "etcd", etcd.version),
    command: ["etcdctl"],
    args: [`--endpoints=${endpoint}`, ...ETCDCTL_TLS, "snapshot", "save", "/backup/$(POD_NAME).db"],
    env: [{ name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }],
    ports: [],
    readiness: { path: "", port: 0, scheme: "HTTP" },
    requests: { cpu: "50m", memory: "64Mi" },
    volumeMounts: [
      { name: "backup", mountPath: "/backup" },
      { name: "pki", mountPath: PKI_DIR, readOnly: true },
    ],
  };
  const snapshotOnly = jobPodTemplate(
    plane,
    labels,
    container,
    [
      { name: "backup", persistentVolumeClaim: { claimName: BACKUP_CLAIM } },
      pkiVolume("pki", [PKI_SECRETS.etcdServer]),
    ],
    "OnFailure",
  );
  const offHost = etcd.backup.offHost;
  const pushed = offHost ? withOffHostPush(plane, snapshotOnly, offHost) : snapshotOnly;
  const template = etcd.backup.prune ? withSnapshotPrune(pushed, etcd.backup.prune) : pushed;
  return [
    {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name: BACKUP_CLAIM, namespace: etcd.namespace, labels: { ...labels } },
      spec: {
        accessModes: ["ReadWriteOnce"],
        ...(etcd.storageClassName ? { storageClassName: etcd.storageClassName } : {}),
        resources: { requests: { storage: etcd.backup.storage } },
      },
    },
    etcdCronJob(plane, "etcd-backup", labels, etcd.backup, template),
  ];
}

/**
 * A CronJob of the etcd's namespace running `template`: never two at once, a run missed by more
 * than ten minutes not caught up, the last three of each outcome kept, a run's pod retried twice.
 */
function etcdCronJob(
  plane: HostedControlPlane,
  name: string,
  labels: Labels,
  when: { readonly schedule: string; readonly suspend: boolean },
  template: JsonMap,
): JsonMap {
  return {
    apiVersion: "batch/v1",
    kind: "CronJob",
    metadata: { name, namespace: plane.etcd.namespace, labels: { ...labels } },
    spec: {
      schedule: when.schedule,
      suspend: when.suspend,
      concurrencyPolicy: "Forbid",
      startingDeadlineSeconds: 600,
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 3,
      jobTemplate: { spec: { backoffLimit: 2, template } },
    },
  };
}

/**
 * Scheduled defragmentation, when the class asks for it: a CronJob whose pod runs `etcdctl defrag
 * --cluster` (every member in turn, found through any of them). Never two at once; a missed run is
 * not caught up.
 */
function defragObjects(plane: HostedControlPlane, owner: Labels): JsonMap[] {
  const { etcd } = plane;
  if (!etcd.defrag) return [];
  const labels = { ...owner, "app.kubernetes.io/component": "etcd-defrag" };
  const container: ContainerSpec = {
    name: "defrag",
    image: imageOf(plane, "etcd", etcd.version),
    command: ["etcdctl"],
    args: [
      `--endpoints=${controlPlaneEndpoints(plane).etcdServers.join(",")}`,
      ...ETCDCTL_TLS,
      "--command-timeout=5m",
      "defrag",
      "--cluster",
    ],
    ports: [],
    readiness: { path: "", port: 0, scheme: "HTTP" },
    requests: { cpu: "50m", memory: "64Mi" },
    volumeMounts: [{ name: "pki", mountPath: PKI_DIR, readOnly: true }],
  };
  const template = jobPodTemplate(
    plane,
    labels,
    container,
    [pkiVolume("pki", [PKI_SECRETS.etcdServer])],
    "OnFailure",
  );
  return [etcdCronJob(plane, "etcd-defrag", labels, etcd.defrag, template)];
}

interface RestoreTarget {
  /** The Job's name. */
  readonly job: string;
  /** The restore's. */
  readonly name: string;
  readonly snapshot: string;
  /** From an off-host backup: the Job fetches the snapshot staged for it. */
  readonly fromBackup: boolean;
  /** The member's name and peer URL, as the StatefulSet's pod announces them, and every member's. */
  readonly member: string;
  readonly peerUrl: string;
  readonly initialCluster: string;
  readonly token: string;
}

/**
 * A restore: a Job (run once, never retried) whose pod restores the snapshot with `etcdutl snapshot
 * restore` into a new data directory of the stopped etcd's own volume; the StatefulSet then starts
 * from that directory. The data etcd ran on stays beside it, untouched. From an off-host backup, the
 * snapshot is fetched into the backup volume first (off-host-pods.ts).
 */
function restoreJob(plane: HostedControlPlane, owner: Labels, target: RestoreTarget): JsonMap {
  const { etcd } = plane;
  const labels = { ...owner, "app.kubernetes.io/component": "etcd-restore" };
  const offHost = target.fromBackup ? etcd.backup.offHost : undefined;
  const snapshot = offHost ? `${fetchedSnapshotDir(target.job)}/snapshot.db` : `/backup/${target.snapshot}`;
  const container: ContainerSpec = {
    name: "restore",
    image: imageOf(plane, "etcd", etcd.version),
    command: ["etcdutl"],
    args: [
      "snapshot",
      "restore",
      snapshot,
      `--data-dir=${restoredDataDir(target.name)}`,
      `--name=${target.member}`,
      `--initial-cluster=${target.initialCluster}`,
      `--initial-advertise-peer-urls=${target.peerUrl}`,
      `--initial-cluster-token=${target.token}`,
    ],
    env: [],
    ports: [],
    readiness: { path: "", port: 0, scheme: "HTTP" },
    requests: { cpu: "50m", memory: "64Mi" },
    volumeMounts: [
      { name: "data", mountPath: VOLUME_DIR },
      { name: "backup", mountPath: "/backup", readOnly: true },
    ],
  };
  const template = jobPodTemplate(
    plane,
    labels,
    container,
    [
      { name: "data", persistentVolumeClaim: { claimName: `data-${target.member}` } },
      { name: "backup", persistentVolumeClaim: { claimName: BACKUP_CLAIM, readOnly: true } },
    ],
    "Never",
  );
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name: target.job, namespace: etcd.namespace, labels: { ...labels } },
    spec: {
      backoffLimit: 0,
      template: offHost
        ? withOffHostFetch(plane, template, offHost, { name: target.name, job: target.job })
        : template,
    },
  };
}
