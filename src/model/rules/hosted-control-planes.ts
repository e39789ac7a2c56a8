import { explainSkew, parseKubeVersion } from "../../apimachinery/kube-version.js";
import { parseQuantity } from "../../apimachinery/quantity.js";
import { ADDONS_APP, controlPlaneAppName, sharedEtcdAppName } from "../controlplane/app-names.js";
import {
  DEFAULT_ETCD_STORAGE,
  type HostedControlPlane,
  hostPortsOf,
  MIN_ETCD_NOT_READY_FOR_MS,
  resolveControlPlane,
} from "../controlplane/hosted-control-plane.js";
import { parseDuration } from "../duration.js";
import { suggest } from "../schema-problems.js";
import type { Cluster, ControlPlaneClass, Origin } from "../types.js";
import type { Path, RuleContext } from "./rule.js";

/**
 * Hosted control planes (Kube-on-Kube) must be runnable as written: the host and the class exist,
 * hosting has no cycle and is reached in push mode, the class's component versions respect
 * Kubernetes' version-skew policy, and on one host no two control planes share a namespace, a port
 * or an etcd prefix. Clusters sharing an etcd agree on it.
 */
export function checkHostedControlPlanes(context: RuleContext): void {
  const { model } = context;
  const classes = new Map(model.controlPlaneClasses.map((c) => [c.metadata.name, c]));
  for (const found of model.controlPlaneClasses) {
    checkClassSkew(context, found);
    checkEtcdRepair(context, found);
    checkEtcdQuota(context, found);
  }
  const planes: { cluster: Cluster; plane: HostedControlPlane }[] = [];
  for (const cluster of model.clusters) {
    if (!cluster.spec.controlPlane) {
      if (cluster.spec.connection?.mode === "hosted")
        report(
          context,
          cluster.origin,
          ["spec", "connection", "mode"],
          "INVALID_FIELD_COMBINATION",
          "connection mode hosted needs spec.controlPlane: a hosted cluster is reached through the control plane gitfleet runs for it",
        );
      continue;
    }
    checkCluster(context, cluster, classes);
    const plane = resolveControlPlane(cluster, classes);
    if (plane) planes.push({ cluster, plane });
  }
  checkCycles(context);
  checkPerHost(context, planes);
  checkSharedEtcds(context, planes);
  checkGeneratedNames(context);
}

function report(
  { reporter }: RuleContext,
  origin: Origin,
  path: Path,
  code: "UNKNOWN_REFERENCE" | "INVALID_FIELD_COMBINATION" | "DUPLICATE_NAME" | "INVALID_NAME",
  message: string,
): void {
  reporter.report({ origin, path, code, message });
}

// A member is replaced only after it has been NotReady a while: never for a restart or a missed probe.
function checkEtcdRepair(context: RuleContext, found: ControlPlaneClass): void {
  const text = found.spec.etcd.repair?.notReadyFor;
  const ms = text === undefined ? undefined : parseDuration(text);
  if (ms !== undefined && ms < MIN_ETCD_NOT_READY_FOR_MS)
    report(
      context,
      found.origin,
      ["spec", "etcd", "repair", "notReadyFor"],
      "INVALID_FIELD_COMBINATION",
      `an etcd member must be NotReady at least ${MIN_ETCD_NOT_READY_FOR_MS / 1000}s before it is replaced (${text} would replace members that are only restarting)`,
    );
}

// etcd's quota: within what etcd suggests, and within the volume it fills.
function checkEtcdQuota(context: RuleContext, found: ControlPlaneClass): void {
  const { quota, storage } = found.spec.etcd;
  const bytes = quota === undefined ? undefined : parseQuantity(quota);
  if (quota === undefined || bytes === undefined) return;
  const volume = parseQuantity(storage ?? DEFAULT_ETCD_STORAGE);
  const why =
    bytes < MIN_ETCD_QUOTA
      ? `at least 16Mi (${quota} leaves etcd no room for its own bookkeeping)`
      : bytes > MAX_ETCD_QUOTA
        ? `at most 8Gi, etcd's suggested maximum (${quota})`
        : volume !== undefined && bytes > volume
          ? `within the members' volume (${quota} is more than etcd.storage ${storage ?? DEFAULT_ETCD_STORAGE}: the disk would fill before the quota)`
          : undefined;
  if (why)
    report(
      context,
      found.origin,
      ["spec", "etcd", "quota"],
      "INVALID_FIELD_COMBINATION",
      `etcd's quota is ${why}`,
    );
}

const MIN_ETCD_QUOTA = 16 * 2 ** 20;
const MAX_ETCD_QUOTA = 8 * 2 ** 30;

function checkClassSkew(context: RuleContext, found: ControlPlaneClass): void {
  const apiServer = parseKubeVersion(found.spec.apiServer?.version ?? found.spec.version);
  if (found.spec.apiServer?.version !== undefined)
    report(
      context,
      found.origin,
      ["spec", "apiServer", "version"],
      "INVALID_FIELD_COMBINATION",
      "the API server runs the class's spec.version; set that instead (only kube-controller-manager and kube-scheduler may trail it)",
    );
  if (!apiServer) return;
  for (const component of ["controllerManager", "scheduler"] as const) {
    const text = found.spec[component]?.version;
    const version = text === undefined ? undefined : parseKubeVersion(text);
    const why = version ? explainSkew(version, apiServer) : undefined;
    if (why)
      report(
        context,
        found.origin,
        ["spec", component, "version"],
        "INVALID_FIELD_COMBINATION",
        `${component === "scheduler" ? "kube-scheduler" : "kube-controller-manager"} ${text}: ${why}`,
      );
  }
}

function checkCluster(
  context: RuleContext,
  cluster: Cluster,
  classes: ReadonlyMap<string, ControlPlaneClass>,
): void {
  const spec = cluster.spec.controlPlane;
  if (!spec) return;
  const { origin } = cluster;
  const name = cluster.metadata.name;
  const clusters = new Map(context.model.clusters.map((c) => [c.metadata.name, c]));
  const declared = [...(context.declared.get("Cluster") ?? [])];
  const connection = cluster.spec.connection;
  if (connection && (connection.mode ?? "hosted") !== "hosted")
    report(
      context,
      origin,
      ["spec", "connection", "mode"],
      "INVALID_FIELD_COMBINATION",
      `a cluster with spec.controlPlane is reached in mode hosted (with the admin kubeconfig gitfleet generates in its host), not ${connection.mode}`,
    );
  for (const field of ["context", "kubeconfigFile", "kubeconfigEnv"] as const)
    if (connection?.[field] !== undefined)
      report(
        context,
        origin,
        ["spec", "connection", field],
        "INVALID_FIELD_COMBINATION",
        `a hosted cluster's credentials are generated by gitfleet in its host; remove connection.${field}`,
      );
  if (spec.host === name)
    report(
      context,
      origin,
      ["spec", "controlPlane", "host"],
      "INVALID_FIELD_COMBINATION",
      `cluster ${name} cannot host its own control plane`,
    );
  else if (!declared.includes(spec.host))
    report(
      context,
      origin,
      ["spec", "controlPlane", "host"],
      "UNKNOWN_REFERENCE",
      `unknown cluster "${spec.host}"${suggest(spec.host, declared)}; clusters are defined under clusters/`,
    );
  else if (clusters.get(spec.host)?.spec.connection?.mode === "pull")
    report(
      context,
      origin,
      ["spec", "controlPlane", "host"],
      "INVALID_FIELD_COMBINATION",
      `host ${spec.host} is reached in pull mode; a host must be reachable by the controller (push or hosted), which writes the control plane's certificates into it`,
    );
  if (!classes.has(spec.class))
    report(
      context,
      origin,
      ["spec", "controlPlane", "class"],
      "UNKNOWN_REFERENCE",
      `unknown ControlPlaneClass "${spec.class}"${suggest(spec.class, [...classes.keys()])}; classes are defined under controlplanes/`,
    );
  checkExpose(context, cluster, classes.get(spec.class));
}

function checkExpose(context: RuleContext, cluster: Cluster, found: ControlPlaneClass | undefined): void {
  const spec = cluster.spec.controlPlane;
  if (!spec) return;
  const { expose } = spec;
  if (expose.type === "HostPort") checkHostPort(context, cluster, found);
  if (expose.type === "NodePort") {
    needs(
      context,
      cluster,
      "address",
      "a node's address (or a name for the nodes) clients reach the node port at",
    );
    if (expose.port !== undefined && (expose.port < 30000 || expose.port > 32767))
      report(
        context,
        cluster.origin,
        ["spec", "controlPlane", "expose", "port"],
        "INVALID_FIELD_COMBINATION",
        `node port ${expose.port} is outside the default node port range 30000-32767`,
      );
  }
  if (expose.type !== "HostPort" && expose.nodeSelector !== undefined)
    report(
      context,
      cluster.origin,
      ["spec", "controlPlane", "expose", "nodeSelector"],
      "INVALID_FIELD_COMBINATION",
      "nodeSelector applies to expose HostPort only",
    );
  checkEtcdMode(context, cluster);
}

function needs(context: RuleContext, cluster: Cluster, field: "port" | "address", why: string): void {
  const expose = cluster.spec.controlPlane?.expose;
  if (expose && expose[field] === undefined)
    report(
      context,
      cluster.origin,
      ["spec", "controlPlane", "expose"],
      "INVALID_FIELD_COMBINATION",
      `expose ${expose.type} needs ${field}: ${why}`,
    );
}

function checkHostPort(context: RuleContext, cluster: Cluster, found: ControlPlaneClass | undefined): void {
  const spec = cluster.spec.controlPlane;
  if (!spec) return;
  const { etcd } = spec;
  needs(context, cluster, "port", "the API server's port on the host node");
  needs(
    context,
    cluster,
    "address",
    "the host node's address clients and the control plane's own components reach it at",
  );
  // Every member on the host network would announce the one address and ports: one member only.
  const replicas = found?.spec.etcd.replicas ?? 1;
  if (replicas !== 1)
    report(
      context,
      cluster.origin,
      ["spec", "controlPlane", "expose", "type"],
      "INVALID_FIELD_COMBINATION",
      `${etcd?.mode === "Shared" ? "a shared" : "a dedicated"} etcd on a host port runs one member (class ${spec.class} asks for ${replicas}); use LoadBalancer or NodePort for a replicated etcd`,
    );
  if (etcd?.mode === "Shared" && etcd.port === undefined)
    report(
      context,
      cluster.origin,
      ["spec", "controlPlane", "etcd"],
      "INVALID_FIELD_COMBINATION",
      "a shared etcd on a host port needs etcd.port: its client port on the host node",
    );
}

function checkEtcdMode(context: RuleContext, cluster: Cluster): void {
  const etcd = cluster.spec.controlPlane?.etcd;
  if (etcd?.mode === "Shared" && etcd.name === undefined)
    report(
      context,
      cluster.origin,
      ["spec", "controlPlane", "etcd"],
      "INVALID_FIELD_COMBINATION",
      "a shared etcd needs a name: the clusters naming the same one share it",
    );
  if (etcd?.mode === "Shared") return;
  for (const field of ["name", "prefix", "port"] as const)
    if (etcd?.[field] !== undefined)
      report(
        context,
        cluster.origin,
        ["spec", "controlPlane", "etcd", field],
        "INVALID_FIELD_COMBINATION",
        `etcd.${field} applies to a Shared etcd only`,
      );
}

// Hosting may chain (a hosted cluster hosting others) but never come back to where it started.
function checkCycles(context: RuleContext): void {
  const hostOf = new Map<string, string>();
  for (const c of context.model.clusters)
    if (c.spec.controlPlane) hostOf.set(c.metadata.name, c.spec.controlPlane.host);
  for (const cluster of context.model.clusters) {
    const start = cluster.metadata.name;
    const chain = [start];
    let at = hostOf.get(start);
    while (at !== undefined && at !== start && !chain.includes(at)) {
      chain.push(at);
      at = hostOf.get(at);
    }
    if (at === start && chain.length > 1)
      report(
        context,
        cluster.origin,
        ["spec", "controlPlane", "host"],
        "INVALID_FIELD_COMBINATION",
        `hosting cycle: ${[...chain, start].join(" is hosted by ")}; a host never runs on a cluster it hosts`,
      );
  }
}

type Planes = readonly { cluster: Cluster; plane: HostedControlPlane }[];

function checkPerHost(context: RuleContext, planes: Planes): void {
  checkNamespaces(context, planes);
  const ports = new Map<string, { cluster: Cluster; what: string }>();
  for (const { cluster, plane } of planes) {
    const taken: [string, number][] = Object.entries(hostPortsOf(plane));
    if (plane.expose.type === "NodePort" && plane.expose.port !== undefined)
      taken.push(["node port", plane.expose.port]);
    for (const [what, port] of taken) {
      const key = `${plane.host}/${port}`;
      const holder = ports.get(key);
      if (holder && holder.cluster !== cluster)
        report(
          context,
          cluster.origin,
          ["spec", "controlPlane", "expose", "port"],
          "DUPLICATE_NAME",
          `port ${port} (${what}) of host ${plane.host} is already taken by ${holder.what} of ${holder.cluster.metadata.name} (${context.reporter.where(holder.cluster.origin)})`,
        );
      else ports.set(key, { cluster, what });
    }
  }
  checkSharedPorts(context, planes, ports);
}

// A control plane's objects are named alike in every namespace, so its namespace is its own in the
// whole fleet (an object's identity is fleet-wide), whichever host it is on.
function checkNamespaces(context: RuleContext, planes: Planes): void {
  const namespaces = new Map<string, string>();
  for (const { cluster, plane } of planes) {
    const earlier = namespaces.get(plane.namespace);
    if (earlier)
      report(
        context,
        cluster.origin,
        ["spec", "controlPlane", "namespace"],
        "DUPLICATE_NAME",
        `namespace ${plane.namespace} already holds the control plane of ${earlier}; give each hosted cluster its own`,
      );
    else namespaces.set(plane.namespace, plane.cluster);
  }
  for (const { cluster, plane } of planes)
    if (plane.etcd.mode === "Shared" && namespaces.has(plane.etcd.namespace))
      report(
        context,
        cluster.origin,
        ["spec", "controlPlane", "etcd", "name"],
        "DUPLICATE_NAME",
        `shared etcd ${plane.etcd.name} would live in namespace ${plane.etcd.namespace}, which the control plane of ${namespaces.get(plane.etcd.namespace)} uses`,
      );
}

// A shared etcd's ports (client, peer, metrics) are taken once, by the first cluster naming it.
function checkSharedPorts(
  context: RuleContext,
  planes: readonly { cluster: Cluster; plane: HostedControlPlane }[],
  ports: Map<string, { cluster: Cluster; what: string }>,
): void {
  const seen = new Set<string>();
  for (const { cluster, plane } of planes) {
    const base = plane.etcd.mode === "Shared" ? plane.etcd.hostPort : undefined;
    if (base === undefined || seen.has(`${plane.host}/${plane.etcd.name}`)) continue;
    seen.add(`${plane.host}/${plane.etcd.name}`);
    for (const port of [base, base + 1, base + 2]) {
      const holder = ports.get(`${plane.host}/${port}`);
      if (holder)
        report(
          context,
          cluster.origin,
          ["spec", "controlPlane", "etcd", "port"],
          "DUPLICATE_NAME",
          `port ${port} (shared etcd ${plane.etcd.name}) of host ${plane.host} is already taken by ${holder.what} of ${holder.cluster.metadata.name}`,
        );
      else ports.set(`${plane.host}/${port}`, { cluster, what: `shared etcd ${plane.etcd.name}` });
    }
  }
}

// Clusters sharing an etcd run on one host, agree on its settings and keep their data apart.
function checkSharedEtcds(context: RuleContext, planes: Planes): void {
  const byEtcd = new Map<string, { cluster: Cluster; plane: HostedControlPlane }[]>();
  for (const entry of planes)
    if (entry.plane.etcd.mode === "Shared")
      byEtcd.set(entry.plane.etcd.name, [...(byEtcd.get(entry.plane.etcd.name) ?? []), entry]);
  for (const sharers of byEtcd.values()) {
    checkAgreement(context, sharers);
    checkPrefixes(context, sharers);
  }
}

function checkAgreement(context: RuleContext, sharers: Planes): void {
  const [first, ...others] = sharers;
  if (!first) return;
  for (const { cluster, plane } of others) {
    const differs = sharedEtcdDifference(first.plane, plane);
    if (differs)
      report(
        context,
        cluster.origin,
        ["spec", "controlPlane", "etcd"],
        "INVALID_FIELD_COMBINATION",
        `shared etcd ${plane.etcd.name} is also used by ${first.cluster.metadata.name} (${context.reporter.where(first.cluster.origin)}) with ${differs}; clusters sharing an etcd agree on its host and settings`,
      );
  }
}

// Each sharer keeps its own prefix, and no prefix lies inside another (/a and /a/b would overlap).
function checkPrefixes(context: RuleContext, sharers: Planes): void {
  const at: Path = ["spec", "controlPlane", "etcd", "prefix"];
  for (const [i, { cluster, plane }] of sharers.entries()) {
    const { name, prefix } = plane.etcd;
    const clash = sharers.slice(0, i).find((other) => other.plane.etcd.prefix === prefix);
    if (clash)
      report(
        context,
        cluster.origin,
        at,
        "DUPLICATE_NAME",
        `prefix ${prefix} of shared etcd ${name} already holds the data of ${clash.cluster.metadata.name}; give each cluster its own`,
      );
    const outer = sharers.find((other) => prefix.startsWith(`${other.plane.etcd.prefix}/`));
    if (outer)
      report(
        context,
        cluster.origin,
        at,
        "INVALID_FIELD_COMBINATION",
        `prefix ${prefix} lies inside ${outer.cluster.metadata.name}'s prefix ${outer.plane.etcd.prefix} in shared etcd ${name}; prefixes may not nest`,
      );
  }
}

function sharedEtcdDifference(a: HostedControlPlane, b: HostedControlPlane): string | undefined {
  if (a.host !== b.host) return `host ${a.host}, not ${b.host}`;
  if (a.registry !== b.registry) return `registry ${a.registry}, not ${b.registry}`;
  if (a.expose.type === "HostPort" || b.expose.type === "HostPort") {
    if (a.expose.type !== b.expose.type) return `expose ${a.expose.type}, not ${b.expose.type}`;
    if (a.etcd.hostPort !== b.etcd.hostPort) return `port ${a.etcd.hostPort}, not ${b.etcd.hostPort}`;
    if (a.expose.address !== b.expose.address) return `address ${a.expose.address}, not ${b.expose.address}`;
  }
  const settings = (p: HostedControlPlane) =>
    JSON.stringify([
      p.etcd.version,
      p.etcd.replicas,
      p.etcd.storage,
      p.etcd.storageClassName,
      p.etcd.backup,
      p.etcd.defrag,
      p.etcd.repair,
    ]);
  if (settings(a) !== settings(b))
    return `other etcd settings in its class (${a.className}, not ${b.className})`;
  return undefined;
}

// Generated apps are named after the cluster; an app name is a label value of at most 63 characters,
// and a name the repo already uses for an app of its own is refused rather than merged.
function checkGeneratedNames(context: RuleContext): void {
  const { model } = context;
  const written = new Set(model.apps.filter((app) => !app.generated).map((app) => app.name));
  for (const cluster of model.clusters) {
    const spec = cluster.spec.controlPlane;
    if (!spec) continue;
    const names = [controlPlaneAppName(cluster.metadata.name), ADDONS_APP];
    if (spec.etcd?.mode === "Shared" && spec.etcd.name) names.push(sharedEtcdAppName(spec.etcd.name));
    for (const name of names) {
      if (name.length > 63)
        report(
          context,
          cluster.origin,
          ["metadata", "name"],
          "INVALID_NAME",
          `a hosted cluster's name makes its generated app "${name}", longer than 63 characters; shorten the cluster's name`,
        );
      if (written.has(name))
        report(
          context,
          cluster.origin,
          ["metadata", "name"],
          "DUPLICATE_NAME",
          `apps/${name}/ uses the name gitfleet gives this hosted cluster's generated app; rename the app`,
        );
    }
  }
  checkRepoPlacements(context);
}

// The repo's own Placements neither take a generated Placement's name nor select a generated app.
function checkRepoPlacements(context: RuleContext): void {
  const generated = new Set(context.model.apps.filter((app) => app.generated).map((app) => app.name));
  for (const placement of context.model.placements) {
    if (placement.origin.file.startsWith("clusters/")) continue;
    if (generated.has(placement.metadata.name))
      report(
        context,
        placement.origin,
        ["metadata", "name"],
        "DUPLICATE_NAME",
        `Placement ${placement.metadata.name} has the name gitfleet gives a hosted cluster's generated Placement; rename it`,
      );
    for (const [i, app] of (placement.spec.apps ?? []).entries())
      if (generated.has(app))
        report(
          context,
          placement.origin,
          ["spec", "apps", i],
          "INVALID_FIELD_COMBINATION",
          `app ${app} is generated for a hosted cluster and placed by gitfleet on its host; a Placement may not select it`,
        );
  }
}
