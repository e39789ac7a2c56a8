import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createConnection, createServer, type Server } from "node:net";
import { asList, asMap, type JsonMap } from "../../../src/apimachinery/json.js";

/**
 * A pod network for the test-only process runtime, made as a CNI bridge plugin makes one: a Linux
 * bridge `gfpn<N>` holding 10.N.0.1/16 on the host, and per pod a network namespace with a veth pair
 * (the pod's end is its eth0, with the next 10.N.x.y and a default route through the bridge), so pods
 * of one StatefulSet can all listen on the same ports, and the host — its API server, the test — reaches
 * each at its own address. Needs root (the tier runs as root). Leftovers of a run that was killed are
 * removed when the next one starts.
 *
 * Cluster DNS is stood in for by one hosts file every pod's /etc/hosts is bound to (rewritten in place
 * as pods come and go): a StatefulSet pod's `<hostname>.<subdomain>.<namespace>.svc` and a Service's
 * `<name>.<namespace>.svc` (a ready pod's address: no kube-proxy here). A LoadBalancer Service with a
 * loadBalancerIP gets that address on the bridge and a TCP proxy to its ready pods, as MetalLB and
 * kube-proxy would give it together.
 */
export class PodNetwork {
  private next = 2;
  private readonly namespaces = new Map<string, string>();
  private hosts = "";
  private readonly proxies = new Map<string, Server>();
  private targets = new Map<string, string[]>();

  private constructor(
    /** The second octet of the network: 10.N.0.0/16. */
    readonly octet: number,
    /** The file every pod's /etc/hosts is bound to. */
    readonly hostsFile: string,
  ) {}

  /** Makes the bridge on a /16 no interface of the machine uses. */
  static create(hostsFile: string): PodNetwork {
    removeLeftovers();
    const used = ip(["-o", "-4", "addr", "show"]);
    const free = Array.from({ length: 50 }, (_, i) => 200 + i).filter((n) => !used.includes(` 10.${n}.`));
    const octet = free[Math.floor(Math.random() * free.length)];
    if (octet === undefined) throw new Error("no free 10.N.0.0/16 for a pod network");
    const bridge = `gfpn${octet}`;
    ip(["link", "add", bridge, "type", "bridge"]);
    ip(["addr", "add", `10.${octet}.0.1/16`, "dev", bridge]);
    ip(["link", "set", bridge, "up"]);
    writeFileSync(hostsFile, BASE_HOSTS);
    return new PodNetwork(octet, hostsFile);
  }

  /** The bridge's own address: the host as pods see it. */
  get gateway(): string {
    return `10.${this.octet}.0.1`;
  }

  /** The `k`-th address kept for LoadBalancer Services (10.N.255.k): name one as expose.address. */
  loadBalancerAddress(k: number): string {
    return `10.${this.octet}.255.${k}`;
  }

  /** A network namespace with its own address for the pod `uid`; returns the namespace and address. */
  attach(uid: string): { netns: string; ip: string } {
    const n = this.next++;
    const address = `10.${this.octet}.${Math.floor(n / 250)}.${(n % 250) + 2}`;
    const netns = `gfpn${this.octet}-${n}`;
    const host = `gfv${this.octet}x${n}`;
    ip(["netns", "add", netns]);
    ip(["link", "add", host, "type", "veth", "peer", "name", "eth0", "netns", netns]);
    ip(["link", "set", host, "master", `gfpn${this.octet}`, "up"]);
    ip(["-n", netns, "addr", "add", `${address}/16`, "dev", "eth0"]);
    ip(["-n", netns, "link", "set", "eth0", "up"]);
    ip(["-n", netns, "link", "set", "lo", "up"]);
    ip(["-n", netns, "route", "add", "default", "via", this.gateway]);
    this.namespaces.set(uid, netns);
    return { netns, ip: address };
  }

  /** Removes the pod's namespace (its veth goes with it). */
  detach(uid: string): void {
    const netns = this.namespaces.get(uid);
    if (!netns) return;
    this.namespaces.delete(uid);
    tryIp(["netns", "delete", netns]);
  }

  /**
   * Brings the names and LoadBalancers up to date from each pod's address, readiness, labels and
   * StatefulSet identity and from the cluster's Services.
   */
  update(pods: readonly NetworkPod[], services: readonly NetworkService[]): void {
    const lines: string[] = [];
    for (const pod of pods)
      if (pod.hostname && pod.subdomain)
        lines.push(`${pod.ip} ${dnsNames(`${pod.hostname}.${pod.subdomain}.${pod.namespace}.svc`)}`);
    const targets = new Map<string, string[]>();
    for (const service of services) lines.push(...serviceEntries(service, pods, targets));
    const hosts = `${BASE_HOSTS}${lines.sort().join("\n")}\n`;
    if (hosts !== this.hosts) {
      // In place: the file bound into running pods is this inode.
      writeFileSync(this.hostsFile, hosts);
      this.hosts = hosts;
    }
    this.targets = targets;
    for (const listen of targets.keys()) if (!this.proxies.has(listen)) this.listen(listen);
  }

  // A TCP proxy on a LoadBalancer's address and port to the first of its ready pods that answers.
  private listen(listen: string): void {
    const [address = "", port = ""] = listen.split(":");
    tryIp(["addr", "add", `${address}/32`, "dev", `gfpn${this.octet}`]);
    const server = createServer((socket) => {
      const [target] = this.targets.get(listen) ?? [];
      if (!target) {
        socket.destroy();
        return;
      }
      const [host = "", to = ""] = target.split(":");
      const upstream = createConnection({ host, port: Number(to) });
      socket.pipe(upstream).pipe(socket);
      const close = () => {
        socket.destroy();
        upstream.destroy();
      };
      socket.on("error", close);
      upstream.on("error", close);
    });
    server.on("error", () => this.proxies.delete(listen));
    server.listen(Number(port), address);
    this.proxies.set(listen, server);
  }

  /** Removes every namespace, the proxies and the bridge. */
  close(): void {
    for (const server of this.proxies.values()) server.close();
    for (const uid of [...this.namespaces.keys()]) this.detach(uid);
    tryIp(["link", "delete", `gfpn${this.octet}`]);
  }
}

export interface NetworkPod {
  readonly namespace: string;
  readonly ip: string;
  readonly ready: boolean;
  readonly labels: Readonly<Record<string, string>>;
  readonly hostname?: string | undefined;
  readonly subdomain?: string | undefined;
  /** Its container ports by name, for a Service's named targetPort. */
  readonly ports: Readonly<Record<string, number>>;
}

export interface NetworkService {
  readonly namespace: string;
  readonly name: string;
  readonly selector: Readonly<Record<string, string>>;
  readonly publishNotReady: boolean;
  readonly loadBalancerIP?: string | undefined;
  readonly ports: readonly { port: number; targetPort: string | number }[];
}

/** A pod as the network names and serves it, from the API object and where the runtime runs it. */
export function networkPodOf(
  pod: JsonMap,
  own: { readonly ip: string; readonly ready: boolean },
): NetworkPod {
  const spec = asMap(pod.spec);
  const ports = asList(asMap(asList(spec.containers)[0]).ports).map((p) => asMap(p));
  return {
    namespace: String(asMap(pod.metadata).namespace),
    ip: own.ip,
    ready: own.ready,
    labels: asMap(asMap(pod.metadata).labels) as Record<string, string>,
    hostname: typeof spec.hostname === "string" ? spec.hostname : undefined,
    subdomain: typeof spec.subdomain === "string" ? spec.subdomain : undefined,
    ports: Object.fromEntries(
      ports.filter((p) => typeof p.name === "string").map((p) => [String(p.name), Number(p.containerPort)]),
    ),
  };
}

/** A Service as the network serves it: its selector, its ports and, for a LoadBalancer, the address it asks for. */
export function networkServiceOf(item: unknown): NetworkService {
  const service = asMap(item);
  const spec = asMap(service.spec);
  return {
    namespace: String(asMap(service.metadata).namespace),
    name: String(asMap(service.metadata).name),
    selector: asMap(spec.selector) as Record<string, string>,
    publishNotReady: spec.publishNotReadyAddresses === true,
    loadBalancerIP:
      spec.type === "LoadBalancer" && typeof spec.loadBalancerIP === "string"
        ? spec.loadBalancerIP
        : undefined,
    ports: asList(spec.ports).map((p) => ({
      port: Number(asMap(p).port),
      targetPort: (asMap(p).targetPort ?? asMap(p).port) as string | number,
    })),
  };
}

const BASE_HOSTS = "127.0.0.1 localhost\n::1 localhost\n";

// A name and its cluster.local form, as cluster DNS answers both.
function dnsNames(name: string): string {
  return `${name} ${name}.cluster.local`;
}

// A Service's name, to a ready pod's address (any pod's when it publishes those not ready); its
// LoadBalancer's ports, to its ready pods, into `targets`.
function serviceEntries(
  service: NetworkService,
  pods: readonly NetworkPod[],
  targets: Map<string, string[]>,
): string[] {
  const selected = pods.filter((p) => selects(service, p));
  const ready = selected.filter((p) => p.ready);
  for (const port of service.loadBalancerIP ? service.ports : [])
    targets.set(
      `${service.loadBalancerIP}:${port.port}`,
      ready.map((p) => `${p.ip}:${p.ports[port.targetPort] ?? port.targetPort}`),
    );
  const address = (ready[0] ?? (service.publishNotReady ? selected[0] : undefined))?.ip;
  return address ? [`${address} ${dnsNames(`${service.name}.${service.namespace}.svc`)}`] : [];
}

// Whether a Service's selector picks the pod (a Service without one picks none).
function selects(service: NetworkService, pod: NetworkPod): boolean {
  const selector = Object.entries(service.selector);
  return (
    pod.namespace === service.namespace &&
    selector.length > 0 &&
    selector.every(([k, v]) => pod.labels[k] === v)
  );
}

function ip(args: string[]): string {
  return execFileSync("ip", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

function tryIp(args: string[]): void {
  try {
    ip(args);
  } catch {
    // Already gone.
  }
}

// Namespaces and bridges of a run that was killed before it could remove them: a namespace whose
// processes are gone, and a bridge no live namespace uses (the second tier's files run one at a time).
function removeLeftovers(): void {
  const namespaces = ip(["netns", "list"])
    .split("\n")
    .map((line) => line.split(" ")[0] ?? "")
    .filter((name) => /^gfpn\d+-\d+$/.test(name));
  const live = new Set<string>();
  for (const netns of namespaces) {
    if (ip(["netns", "pids", netns]).trim() === "") tryIp(["netns", "delete", netns]);
    else live.add(netns.split("-")[0] as string);
  }
  for (const line of ip(["-o", "link", "show", "type", "bridge"]).split("\n")) {
    const bridge = /^\d+: (gfpn\d+)[:@]/.exec(line)?.[1];
    if (bridge && !live.has(bridge)) tryIp(["link", "delete", bridge]);
  }
}
