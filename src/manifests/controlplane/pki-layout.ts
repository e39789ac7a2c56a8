import type { JsonMap } from "../../apimachinery/json.js";
import type { HostedControlPlane } from "../../model/controlplane/hosted-control-plane.js";

/**
 * The credentials of a hosted control plane: the Secrets gitfleet generates in the host (never in
 * Git), their keys, and the file each key is mounted as. The render mounts them by name only; the
 * credentials step (an edge) writes them. This table is the contract between the two.
 */
export interface PkiSecret {
  /** The Secret's name in its namespace. */
  readonly name: string;
  /** "control-plane": the control plane's namespace; "etcd": the etcd's (differs for a shared etcd). */
  readonly in: "control-plane" | "etcd";
  /** What it holds, for status and docs. */
  readonly purpose: string;
  /** Its keys and, for each, the path under /etc/kubernetes/pki it is mounted at (undefined: not mounted there). */
  readonly keys: Readonly<Record<string, string | undefined>>;
}

/** Where every certificate and key is mounted in the control plane's containers. */
export const PKI_DIR = "/etc/kubernetes/pki";

/** etcdctl's flags to reach an etcd as its client, with the etcd server Secret mounted at PKI_DIR. */
export const ETCDCTL_TLS: readonly string[] = [
  `--cacert=${PKI_DIR}/etcd/ca.crt`,
  `--cert=${PKI_DIR}/etcd/server.crt`,
  `--key=${PKI_DIR}/etcd/server.key`,
];
/** Where a component's kubeconfig Secret is mounted: the kubeconfig and the files it names. */
export const KUBECONFIG_DIR = "/etc/kubernetes/kubeconfig";
/** Where a component's kubeconfig is mounted. */
export const KUBECONFIG_PATH = `${KUBECONFIG_DIR}/kubeconfig`;

/**
 * A CA Secret's keys besides its certificate (tls.crt), key (tls.key) and trust bundle (ca.crt, the
 * CA and, while a rollover overlaps, the previous one): the previous CA and the CA cross-signed by
 * it, during the overlap only. Never mounted: their content reaches components through ca.crt and
 * the certificate files the CA signs.
 */
/**
 * The key of a CA's (and the service-account key's) Secret naming the Cluster's replaceCAs token it
 * was made for: kept with the keys (and in off-host backups), never mounted.
 */
export const REPLACED_FOR_KEY = "replaced-for";
const REPLACED = { [REPLACED_FOR_KEY]: undefined } as const;
const ROLLOVER_KEYS = { "previous.crt": undefined, "cross.crt": undefined, ...REPLACED } as const;

export const PKI_SECRETS = {
  ca: {
    name: "ca",
    in: "control-plane",
    purpose: "cluster CA (signs every client and serving certificate of the hosted cluster)",
    keys: { "ca.crt": "ca.crt", "tls.crt": "ca-signing.crt", "tls.key": "ca.key", ...ROLLOVER_KEYS },
  },
  apiServer: {
    name: "apiserver-serving",
    in: "control-plane",
    purpose: "kube-apiserver serving certificate",
    keys: { "tls.crt": "apiserver.crt", "tls.key": "apiserver.key" },
  },
  frontProxyCa: {
    name: "front-proxy-ca",
    in: "control-plane",
    purpose: "front-proxy CA (aggregated APIs)",
    keys: { "ca.crt": "front-proxy-ca.crt", "tls.crt": undefined, "tls.key": undefined, ...ROLLOVER_KEYS },
  },
  frontProxyClient: {
    name: "front-proxy-client",
    in: "control-plane",
    purpose: "front-proxy client certificate",
    keys: { "tls.crt": "front-proxy-client.crt", "tls.key": "front-proxy-client.key" },
  },
  serviceAccount: {
    name: "service-account",
    in: "control-plane",
    purpose: "service-account token signing key pair",
    keys: { "sa.key": "sa.key", "sa.pub": "sa.pub", ...REPLACED },
  },
  etcdClient: {
    name: "apiserver-etcd-client",
    in: "control-plane",
    purpose: "kube-apiserver's client certificate for etcd, and the etcd CA",
    keys: {
      "tls.crt": "apiserver-etcd-client.crt",
      "tls.key": "apiserver-etcd-client.key",
      "ca.crt": "etcd/ca.crt",
    },
  },
  etcdServer: {
    name: "etcd-serving",
    in: "etcd",
    purpose: "etcd members' serving and peer certificate, and the etcd CA",
    keys: { "tls.crt": "etcd/server.crt", "tls.key": "etcd/server.key", "ca.crt": "etcd/ca.crt" },
  },
  etcdCa: {
    name: "etcd-ca",
    in: "etcd",
    purpose: "etcd CA (signs etcd's serving certificate and its clients')",
    keys: { "ca.crt": undefined, "tls.crt": undefined, "tls.key": undefined, ...ROLLOVER_KEYS },
  },
  adminKubeconfig: {
    name: "admin-kubeconfig",
    in: "control-plane",
    purpose: "kubeconfig of the hosted cluster's admin (what gitfleet connects with)",
    keys: { kubeconfig: undefined },
  },
  controllerManagerKubeconfig: {
    name: "controller-manager-kubeconfig",
    in: "control-plane",
    purpose: "kube-controller-manager's kubeconfig",
    keys: { kubeconfig: undefined, "ca.crt": undefined, "tls.crt": undefined, "tls.key": undefined },
  },
  schedulerKubeconfig: {
    name: "scheduler-kubeconfig",
    in: "control-plane",
    purpose: "kube-scheduler's kubeconfig",
    keys: { kubeconfig: undefined, "ca.crt": undefined, "tls.crt": undefined, "tls.key": undefined },
  },
} as const satisfies Record<string, PkiSecret>;

/**
 * What an off-host backup carries besides the snapshot: the three CAs (with an overlap's previous and
 * cross-signed certificates) and the service-account key pair — what brings a hosted cluster back
 * with its identity on another host, so that kubeconfigs, joined nodes and service-account tokens
 * issued before keep working. Every other certificate is issued again by these CAs.
 */
export const BACKED_UP_PKI: readonly PkiSecret[] = [
  PKI_SECRETS.ca,
  PKI_SECRETS.frontProxyCa,
  PKI_SECRETS.etcdCa,
  PKI_SECRETS.serviceAccount,
];

/**
 * The Secret an off-host restore's Job mounts in the etcd's namespace: the age identity made for that
 * restore (it opens the staged snapshot alone) and the key of the backup it came from. Written by the
 * credentials step when it fetched the backup; never rendered.
 */
export function restoreKeySecret(restore: string): string {
  return `etcd-restore-${restore}-key`;
}

/**
 * The operator's off-host backup store as the backup Job reads it: the files of the store's directory
 * in gitfleet run's --backup-stores-dir, copied into the control plane's namespace by the credentials
 * step (only for a class with etcd.backup.offHost), mounted whole into the Job's push.
 */
export const BACKUP_STORE_SECRET: PkiSecret = {
  name: "etcd-backup-store",
  in: "control-plane",
  purpose: "the operator's off-host backup store: its endpoint, bucket, access key and age recipients",
  keys: {},
};

/** Every Secret of the control plane, with the namespace it is in. */
export function pkiSecretsOf(
  plane: HostedControlPlane,
): { readonly namespace: string; readonly secret: PkiSecret }[] {
  return Object.values(PKI_SECRETS).map((secret) => ({
    namespace: secret.in === "etcd" ? plane.etcd.namespace : plane.namespace,
    secret,
  }));
}

/** A Secret to mount, or only some of its keys (the CA's certificate without its key). */
export type Mounted = PkiSecret | { readonly secret: PkiSecret; readonly only: readonly string[] };

/**
 * A projected volume that mounts the given Secrets' keys at their paths under the pki directory:
 * each component gets only what it uses (only kube-controller-manager holds the CA's key).
 */
export function pkiVolume(name: string, mounted: readonly Mounted[]): JsonMap {
  return {
    name,
    projected: {
      defaultMode: 0o440,
      sources: mounted.map((entry) => {
        const secret = "secret" in entry ? entry.secret : entry;
        const only = "only" in entry ? entry.only : undefined;
        return {
          secret: {
            name: secret.name,
            items: Object.entries(secret.keys)
              .filter((e): e is [string, string] => e[1] !== undefined && (only?.includes(e[0]) ?? true))
              .map(([key, path]) => ({ key, path })),
          },
        };
      }),
    },
  };
}

/** What the cluster CA is trusted as (ca.crt: the CA, and the previous one during a rollover), without its key. */
export const CA_CERTIFICATE: Mounted = { secret: PKI_SECRETS.ca, only: ["ca.crt"] };

/** The annotation on the Secrets whose data gitfleet generates in the host (never rendered, never in Git). */
const GENERATED_CREDENTIALS_ANNOTATION = "gitfleet.io/generated-credentials";

/**
 * The Secrets of a control plane as the render writes them: name, labels and an annotation, no data.
 * They put the Secrets in the host's inventory (pruned only with an allowPrune token, as PVCs are);
 * their data is written by the credentials step under a field manager of its own, which applying
 * these never touches.
 */
export function credentialPlaceholders(
  namespace: string,
  labels: Readonly<Record<string, string>>,
  secrets: readonly PkiSecret[],
): JsonMap[] {
  return secrets.map((secret) => ({
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: secret.name,
      namespace,
      labels: { ...labels },
      annotations: { [GENERATED_CREDENTIALS_ANNOTATION]: secret.purpose },
    },
    type: "Opaque",
  }));
}
