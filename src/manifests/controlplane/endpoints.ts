import { memberNames } from "../../model/controlplane/etcd-member-plan.js";
import {
  controlPlaneNamespace,
  type HostedControlPlane,
  type ResolvedEtcd,
} from "../../model/controlplane/hosted-control-plane.js";
import type { Cluster, ControlPlaneSpec } from "../../model/types.js";

/** The API server's port inside the host's pod network (and its Service's port). */
export const API_SERVER_PORT = 6443;
export const ETCD_CLIENT_PORT = 2379;
export const ETCD_PEER_PORT = 2380;
/** etcd's plain-HTTP metrics and /health port off the host network. */
export const ETCD_METRICS_PORT = 2381;
export const CONTROLLER_MANAGER_PORT = 10257;
export const SCHEDULER_PORT = 10259;

/** Where a control plane's components and clients reach each other. */
export interface ControlPlaneEndpoints {
  /** How kube-controller-manager and kube-scheduler reach the API server from inside the host. */
  readonly inHost: string;
  /** How gitfleet and people reach it from outside the host (the admin kubeconfig's server). */
  readonly external: string;
  /** The etcd URLs the API server's --etcd-servers lists. */
  readonly etcdServers: readonly string[];
  /** Every name and address the API server's serving certificate must cover. */
  readonly apiServerSANs: readonly string[];
  /** Every name and address the etcd members' serving certificate must cover. */
  readonly etcdSANs: readonly string[];
}

/** Computes where everything of a control plane is reached, for the render and the certificates alike. */
export function controlPlaneEndpoints(plane: HostedControlPlane): ControlPlaneEndpoints {
  const { namespace, expose } = plane;
  const service = `kube-apiserver.${namespace}.svc`;
  const hostPort = expose.type === "HostPort";
  const address = expose.address;
  const apiPort = hostPort ? (expose.port ?? API_SERVER_PORT) : API_SERVER_PORT;
  const inHost = hostPort
    ? `https://${urlHost(address ?? "127.0.0.1")}:${apiPort}`
    : `https://${service}:${API_SERVER_PORT}`;
  const external = externalUrl(namespace, expose);
  const sans = [
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
    "kube-apiserver",
    `kube-apiserver.${namespace}`,
    service,
    `${service}.cluster.local`,
    "localhost",
    "127.0.0.1",
    ...[serviceIP(plane.serviceCIDR, 1)].filter((ip): ip is string => ip !== undefined),
    ...(address ? [address] : []),
  ];
  return {
    inHost,
    external,
    etcdServers: etcdServers(plane),
    apiServerSANs: [...new Set(sans)],
    etcdSANs: etcdSANs(plane),
  };
}

/**
 * Where gitfleet reaches a hosted cluster's API server, from its Cluster file alone (the control
 * plane's namespace and expose settings): the fleet repo decides it, never what a host holds.
 * Undefined for a cluster that is not hosted.
 */
export function hostedApiServerUrl(cluster: Cluster): string | undefined {
  const spec = cluster.spec.controlPlane;
  return spec ? externalUrl(controlPlaneNamespace(cluster), spec.expose) : undefined;
}

function externalUrl(namespace: string, expose: ControlPlaneSpec["expose"]): string {
  const service = `kube-apiserver.${namespace}.svc`;
  if (expose.type === "HostPort") return `https://${urlHost(expose.address ?? "127.0.0.1")}:${expose.port}`;
  if (expose.type === "NodePort")
    return `https://${urlHost(expose.address ?? service)}:${expose.port ?? API_SERVER_PORT}`;
  return `https://${urlHost(expose.address ?? service)}:${API_SERVER_PORT}`;
}

function etcdServers(plane: HostedControlPlane): string[] {
  const { etcd } = plane;
  return etcdClientUrls(plane, memberNames(etcd));
}

/**
 * The client URLs of an etcd's members named in `members`, as a client in the host reaches them: an
 * etcd on a host port at that port of the exposed address (it has one member), else each member
 * under the etcd's headless Service.
 */
export function etcdClientUrls(plane: HostedControlPlane, members: readonly string[]): string[] {
  const { etcd, expose } = plane;
  if (etcd.hostPort !== undefined)
    return [`https://${urlHost(expose.address ?? "127.0.0.1")}:${etcd.hostPort}`];
  return members.map((member) => etcdMemberUrl(etcd, member, "client"));
}

/** The port of an etcd member's plain-HTTP metrics and /health. */
export function etcdMetricsPort(etcd: Pick<ResolvedEtcd, "hostPort" | "mode">): number {
  return etcd.hostPort === undefined ? ETCD_METRICS_PORT : etcd.hostPort + (etcd.mode === "Shared" ? 2 : 4);
}

/**
 * A member's client or peer URL as it announces them off the host network: its name under the
 * etcd's headless Service.
 */
export function etcdMemberUrl(
  etcd: Pick<ResolvedEtcd, "name" | "namespace">,
  member: string,
  port: "client" | "peer",
): string {
  return `https://${member}.${etcd.name}.${etcd.namespace}.svc:${port === "client" ? ETCD_CLIENT_PORT : ETCD_PEER_PORT}`;
}

function etcdSANs(plane: HostedControlPlane): string[] {
  const { etcd, expose } = plane;
  const names = ["localhost", "127.0.0.1", `${etcd.name}.${etcd.namespace}.svc`];
  for (const member of memberNames(etcd)) names.push(`${member}.${etcd.name}.${etcd.namespace}.svc`);
  if (etcd.hostPort !== undefined && expose.address) names.push(expose.address);
  return [...new Set(names)];
}

// An IPv6 address goes in brackets inside a URL.
function urlHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

/**
 * The `offset`-th address of an IPv4 CIDR (the kubernetes Service gets the first, cluster DNS the
 * tenth, as kubeadm gives them); undefined when the range is too small or not IPv4.
 */
export function serviceIP(cidr: string, offset: number): string | undefined {
  const [address = "", bitsText = ""] = cidr.split("/");
  const octets = address.split(".").map(Number);
  const bits = Number(bitsText);
  if (octets.length !== 4 || octets.some((o) => !Number.isInteger(o) || o < 0 || o > 255)) return undefined;
  if (!Number.isInteger(bits) || bits < 0 || bits > 30) return undefined;
  const size = 2 ** (32 - bits);
  if (offset >= size - 1) return undefined;
  const base =
    (((octets[0] as number) * 256 + (octets[1] as number)) * 256 + (octets[2] as number)) * 256 +
    (octets[3] as number);
  const network = base - (base % size);
  const value = network + offset;
  return [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join(".");
}
