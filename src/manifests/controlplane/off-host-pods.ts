import type { JsonMap } from "../../apimachinery/json.js";
import { type HostedControlPlane, maxBackupBytes } from "../../model/controlplane/hosted-control-plane.js";
import type { OffHostBackupSpec } from "../../model/types.js";
import { BACKED_UP_PKI, BACKUP_STORE_SECRET, restoreKeySecret } from "./pki-layout.js";

// The pods of off-host backups and restores: gitfleet's own image beside etcd's, talking to the
// operator's store with the Secret the credentials step copies in.

// gitfleet's containers in these pods: no privilege, nothing written but their volumes.
const GITFLEET_SECURITY = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ["ALL"] },
};

const secretVolume = (name: string, secret: string) => ({
  name,
  secret: { secretName: secret, defaultMode: 0o440 },
});

/**
 * The backup pod of a class with off-host backups: the snapshot first (an init container), then
 * gitfleet's own image packs it with the CAs and the service-account key, encrypts it to the
 * operator's recipients and puts it in the operator's store (`gitfleet backup push`). Each backed-up
 * Secret is mounted whole at /pki/<secret>, the store's Secret at /store; the encrypted archive (the
 * plaintext one is never written) is made in an emptyDir as large as the etcd's quota allows a
 * snapshot to be, and removed.
 */
export function withOffHostPush(
  plane: HostedControlPlane,
  template: JsonMap,
  offHost: OffHostBackupSpec,
): JsonMap {
  const spec = template.spec as JsonMap;
  const snapshot = (spec.containers as JsonMap[])[0] as JsonMap;
  const push = {
    name: "push",
    image: offHost.image,
    imagePullPolicy: "IfNotPresent",
    command: ["gitfleet"],
    args: [
      ...["backup", "push", "--cluster", plane.cluster, "--snapshot", "/backup/$(POD_NAME).db"],
      ...["--pki-dir", "/pki", "--store-dir", "/store", "--work-dir", "/scratch"],
      ...(plane.etcd.backup.prune
        ? [
            ...["--keep", String(plane.etcd.backup.prune.keep)],
            ...plane.etcd.backup.prune.held.backups.flatMap((key) => ["--hold", key]),
          ]
        : []),
    ],
    env: [{ name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }],
    resources: { requests: { cpu: "50m", memory: "128Mi" } },
    securityContext: GITFLEET_SECURITY,
    volumeMounts: [
      { name: "backup", mountPath: "/backup", readOnly: true },
      ...BACKED_UP_PKI.map((secret) => ({
        name: `pki-${secret.name}`,
        mountPath: `/pki/${secret.name}`,
        readOnly: true,
      })),
      { name: "store", mountPath: "/store", readOnly: true },
      { name: "work", mountPath: "/scratch" },
    ],
  };
  return {
    ...template,
    spec: {
      ...spec,
      initContainers: [snapshot],
      containers: [push],
      volumes: [
        ...(spec.volumes as JsonMap[]),
        ...BACKED_UP_PKI.map((secret) => secretVolume(`pki-${secret.name}`, secret.name)),
        secretVolume("store", BACKUP_STORE_SECRET.name),
        { name: "work", emptyDir: { sizeLimit: workLimit(plane, 1) } },
      ],
    },
  };
}

// Scratch space for `copies` of the largest backup archive, in MiB.
function workLimit(plane: HostedControlPlane, copies: number): string {
  return `${copies * Math.ceil(maxBackupBytes(plane) / 1024 ** 2)}Mi`;
}

/** Where an off-host restore's Job unpacks the staged snapshot in the backup volume: /backup/<job>. */
export function fetchedSnapshotDir(job: string): string {
  return `/backup/${job}`;
}

/**
 * The restore Job of an off-host restore: before etcdutl, gitfleet's own image fetches the snapshot
 * the credentials step staged for this restore (`gitfleet backup pull --restore`), opening it with the
 * restore's own key (Secret etcd-restore-<name>-key at /restore-key) and the store's Secret at
 * /store, into /backup/<job> of the backup volume (written by this container alone; etcdutl reads it
 * read-only). The encrypted copy and the archive are made in an emptyDir room for two snapshots.
 */
export function withOffHostFetch(
  plane: HostedControlPlane,
  template: JsonMap,
  offHost: OffHostBackupSpec,
  restore: { readonly name: string; readonly job: string },
): JsonMap {
  const spec = template.spec as JsonMap;
  const maxBytes = maxBackupBytes(plane);
  const fetch = {
    name: "fetch",
    image: offHost.image,
    imagePullPolicy: "IfNotPresent",
    command: ["gitfleet"],
    args: [
      ...["backup", "pull", "--cluster", plane.cluster, "--restore", restore.name],
      ...["--store-dir", "/store", "--identity", "/restore-key/identity"],
      ...[
        "--into",
        fetchedSnapshotDir(restore.job),
        "--work-dir",
        "/scratch",
        "--max-bytes",
        String(maxBytes),
      ],
    ],
    resources: { requests: { cpu: "50m", memory: "128Mi" } },
    securityContext: GITFLEET_SECURITY,
    volumeMounts: [
      { name: "backup", mountPath: "/backup" },
      { name: "store", mountPath: "/store", readOnly: true },
      { name: "restore-key", mountPath: "/restore-key", readOnly: true },
      { name: "work", mountPath: "/scratch" },
    ],
  };
  const volumes = (spec.volumes as JsonMap[]).map((volume) =>
    volume.name === "backup"
      ? {
          name: "backup",
          persistentVolumeClaim: { ...(volume.persistentVolumeClaim as JsonMap), readOnly: false },
        }
      : volume,
  );
  return {
    ...template,
    spec: {
      ...spec,
      initContainers: [fetch],
      volumes: [
        ...volumes,
        secretVolume("store", BACKUP_STORE_SECRET.name),
        secretVolume("restore-key", restoreKeySecret(restore.name)),
        { name: "work", emptyDir: { sizeLimit: workLimit(plane, 2) } },
      ],
    },
  };
}

/**
 * The backup pod of a class that keeps a count of snapshots: what the pod ran so far (the snapshot,
 * and the push) runs first, as init containers, then gitfleet's image deletes the oldest snapshots
 * of the backup volume beyond the count (`gitfleet backup prune`), the run's own counted among them
 * and those a restore in the repo names held beside them. Only this container writes the volume
 * besides etcdctl.
 */
export function withSnapshotPrune(
  template: JsonMap,
  prune: NonNullable<HostedControlPlane["etcd"]["backup"]["prune"]>,
): JsonMap {
  const spec = template.spec as JsonMap;
  const container = {
    name: "prune",
    image: prune.image,
    imagePullPolicy: "IfNotPresent",
    command: ["gitfleet"],
    args: [
      ...["backup", "prune", "--dir", "/backup", "--keep", String(prune.keep), "--taken", "$(POD_NAME).db"],
      ...prune.held.snapshots.flatMap((name) => ["--hold", name]),
    ],
    env: [{ name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }],
    resources: { requests: { cpu: "10m", memory: "64Mi" } },
    securityContext: GITFLEET_SECURITY,
    volumeMounts: [{ name: "backup", mountPath: "/backup" }],
  };
  return {
    ...template,
    spec: {
      ...spec,
      initContainers: [
        ...((spec.initContainers as JsonMap[] | undefined) ?? []),
        ...(spec.containers as JsonMap[]),
      ],
      containers: [container],
    },
  };
}
