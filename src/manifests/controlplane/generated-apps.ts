import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import type { JsonMap } from "../../apimachinery/json.js";
import { CLUSTER_SCOPED_KINDS, groupKind } from "../../apimachinery/kinds.js";
import { ADDONS_APP, controlPlaneAppName, sharedEtcdAppName } from "../../model/controlplane/app-names.js";
import {
  type HeldBackups,
  type HostedControlPlane,
  heldBackups,
  NO_PLANE_STATES,
  resolveControlPlane,
  restoreOverlayOf,
  type UpgradeOverlay,
  upgradeOverlay,
} from "../../model/controlplane/hosted-control-plane.js";
import { compareStrings } from "../../model/file-tree.js";
import { identityOf } from "../../model/identity.js";
import { sameEntries } from "../../model/same-entries.js";
import type {
  App,
  AppBuilds,
  BuildTarget,
  Cluster,
  ControlPlaneClass,
  FleetModel,
  GeneratedAppRole,
  HostedPlaneStates,
  Labels,
  Placement,
  Resource,
  RestoreOverlay,
} from "../../model/types.js";
import { allBuilt } from "../app-builds.js";
import { addonObjects } from "./addon-objects.js";
import { cniObjects } from "./cni-objects.js";
import { controlPlaneObjects } from "./control-plane-objects.js";
import { sharedEtcdObjects } from "./etcd-objects.js";
import { kubeProxyObjects } from "./kube-proxy-objects.js";
import { nodeBootstrapObjects } from "./node-bootstrap-objects.js";

/** The apps and Placements gitfleet generates for hosted clusters, added to the model like any other. */
export interface GeneratedApps {
  readonly apps: readonly App[];
  readonly placements: readonly Placement[];
}

/**
 * Per hosted cluster, an app of its control-plane objects placed on its host (tolerating every
 * taint: a control plane cannot move); per shared etcd, an app placed on its host; and one app of
 * addons with a build per hosted cluster, placed on the hosted clusters themselves (which, like any
 * placement, waits for a cluster to be Ready). Their objects come from the Cluster's file (problems
 * point there). Only these Placements select them. Pure.
 */
export function generateControlPlaneApps(
  clusters: readonly Cluster[],
  classes: readonly ControlPlaneClass[],
  overlays?: (cluster: string) => { upgrade?: UpgradeOverlay; restore?: RestoreOverlay; held?: HeldBackups },
): GeneratedApps {
  const byName = new Map(classes.map((c) => [c.metadata.name, c]));
  const apps: App[] = [];
  const placements: Placement[] = [];
  const sharedEtcds = new Map<string, { plane: HostedControlPlane; cluster: Cluster }>();
  const addons: { plane: HostedControlPlane; cluster: Cluster }[] = [];
  const names = new Set(clusters.map((cluster) => cluster.metadata.name));
  const namespaces = new Set<string>();
  for (const cluster of clusters) {
    const overlay = overlays?.(cluster.metadata.name);
    const plane = resolveControlPlane(cluster, byName, overlay?.upgrade, overlay?.restore, overlay?.held);
    // An unknown host (the cluster itself) or a namespace another control plane has is a validation
    // error of its own: nothing to place, nothing to report twice.
    if (!plane || !names.has(plane.host) || plane.host === plane.cluster || namespaces.has(plane.namespace))
      continue;
    namespaces.add(plane.namespace);
    const app = controlPlaneAppName(plane.cluster);
    const role: GeneratedAppRole = { role: "control-plane", for: plane.cluster };
    const source = `control plane of ${plane.cluster} (class ${plane.className})`;
    apps.push(generatedApp(app, role, controlPlaneObjects(plane), cluster, source));
    placements.push(generatedPlacement(app, [plane.host], true, cluster));
    if (plane.etcd.mode === "Shared" && !sharedEtcds.has(plane.etcd.name))
      sharedEtcds.set(plane.etcd.name, { plane, cluster });
    addons.push({ plane, cluster });
  }
  for (const { plane, cluster } of sharedEtcds.values()) {
    if (namespaces.has(plane.etcd.namespace)) continue;
    const app = sharedEtcdAppName(plane.etcd.name);
    const role: GeneratedAppRole = { role: "shared-etcd", for: plane.etcd.name };
    const source = `shared etcd ${plane.etcd.name} (class ${plane.className})`;
    apps.push(generatedApp(app, role, sharedEtcdObjects(plane), cluster, source));
    placements.push(generatedPlacement(app, [plane.host], true, cluster));
  }
  const [first] = addons;
  if (first) {
    apps.push(addonsApp(addons));
    placements.push(
      generatedPlacement(
        ADDONS_APP,
        addons.map(({ plane }) => plane.cluster),
        false,
        first.cluster,
      ),
    );
  }
  apps.sort((a, b) => compareStrings(a.name, b.name));
  placements.sort((a, b) => compareStrings(a.metadata.name, b.metadata.name));
  return { apps, placements };
}

/**
 * The model with its hosted control planes rendered at the states the policies give them (the
 * versions started upgrade batches give, the restores under way; every other cluster at its class's
 * or its own version): the generated apps are generated again from the Clusters, so applying other
 * states later starts from the source, never from a state applied before. `current` is what `model`
 * was generated with (a loaded model: none); the same model when the states are those. Pure.
 */
export function withControlPlaneVersions(
  model: FleetModel,
  states: HostedPlaneStates,
  current: HostedPlaneStates = NO_PLANE_STATES,
): FleetModel {
  if (samePlaneStates(current, states)) return model;
  const generated = generateControlPlaneApps(model.clusters, model.controlPlaneClasses, (cluster) => {
    const upgrade = upgradeOverlay(model, states.versions, cluster);
    const restore = restoreOverlayOf(model.etcdRestores, states.restores, cluster);
    const held = heldBackups(model.etcdRestores, cluster);
    return { ...(upgrade ? { upgrade } : {}), ...(restore ? { restore } : {}), held };
  });
  const apps = [...model.apps.filter((app) => app.generated === undefined), ...generated.apps].sort((a, b) =>
    compareStrings(a.name, b.name),
  );
  return { ...model, apps };
}

/** Whether two hosted planes' states say the same. Pure. */
export function samePlaneStates(a: HostedPlaneStates, b: HostedPlaneStates): boolean {
  return sameEntries(a.versions, b.versions) && sameRestores(a.restores, b.restores);
}

/** Whether two clusters→restore maps say the same (a missing map says none). Pure. */
export function sameRestores(
  a: ReadonlyMap<string, RestoreOverlay> | undefined,
  b: ReadonlyMap<string, RestoreOverlay> | undefined,
): boolean {
  if (!a || !b) return (a?.size ?? 0) === 0 && (b?.size ?? 0) === 0;
  const key = (m: ReadonlyMap<string, RestoreOverlay>) =>
    JSON.stringify([...m].sort(([x], [y]) => compareStrings(x, y)));
  return a.size === b.size && key(a) === key(b);
}

function generatedApp(
  name: string,
  role: GeneratedAppRole,
  objects: JsonMap[],
  from: Cluster,
  source: string,
): App {
  const resources = objects.map((object) => generatedResource(name, object, from));
  return {
    name,
    definition: undefined,
    resources: sortResources(resources),
    generated: role,
    builds: digestOnly(resources, source),
  };
}

// Each hosted cluster's addons, built for it alone (its Service range, its class's CoreDNS).
function addonsApp(planes: readonly { plane: HostedControlPlane; cluster: Cluster }[]): App {
  const targets: BuildTarget[] = planes.map(({ plane, cluster }) => {
    const objects = [
      ...addonObjects(plane),
      ...nodeBootstrapObjects(plane),
      ...kubeProxyObjects(plane),
      ...cniObjects(plane),
    ].map((object) => generatedResource(ADDONS_APP, object, cluster));
    return {
      name: plane.cluster,
      clusterName: plane.cluster,
      source: `addons of hosted cluster ${plane.cluster} (class ${plane.className})`,
      objects: new Map(objects.map((r) => [identityOf(r.group, r.kind, r.namespace, r.name), r])),
    };
  });
  const builds: AppBuilds = {
    source: "addons of hosted clusters",
    defaults: new Map(),
    targets,
    notApplied: [],
    inputDigest: digestOf(targets.flatMap((target) => [...target.objects.values()])),
  };
  return {
    name: ADDONS_APP,
    definition: undefined,
    resources: sortResources(allBuilt(builds.defaults, targets)),
    generated: { role: "addons", for: planes.map(({ plane }) => plane.cluster).join(",") },
    builds,
  };
}

// A generated app is "built" from its Cluster and class: a digest of what it generated tells the
// incremental render when it changed.
function digestOnly(resources: readonly Resource[], source: string): AppBuilds {
  const defaults = new Map(resources.map((r) => [identityOf(r.group, r.kind, r.namespace, r.name), r]));
  return {
    source,
    defaults,
    targets: [],
    notApplied: [],
    inputDigest: digestOf(resources),
  };
}

function digestOf(resources: readonly Resource[]): string {
  const text = JSON.stringify(resources.map((r) => [r.app, r.object]));
  return bytesToHex(sha256(new TextEncoder().encode(text))).slice(0, 16);
}

function sortResources(resources: Resource[]): Resource[] {
  return resources.sort(
    (a, b) =>
      compareStrings(a.group, b.group) ||
      compareStrings(a.kind, b.kind) ||
      compareStrings(a.namespace ?? "", b.namespace ?? "") ||
      compareStrings(a.name, b.name),
  );
}

function generatedResource(app: string, object: JsonMap, from: Cluster): Resource {
  const apiVersion = String(object.apiVersion);
  const group = apiVersion.includes("/") ? (apiVersion.split("/")[0] ?? "") : "";
  const kind = String(object.kind);
  const metadata = object.metadata as { name: string; namespace?: string; labels?: Labels };
  const clusterScoped = CLUSTER_SCOPED_KINDS.has(groupKind(group, kind));
  return {
    app,
    apiVersion,
    group,
    kind,
    name: metadata.name,
    namespace: clusterScoped ? undefined : metadata.namespace,
    labels: metadata.labels ?? {},
    object,
    origin: from.origin,
  };
}

function generatedPlacement(
  app: string,
  clusters: readonly string[],
  tolerateAll: boolean,
  from: Cluster,
): Placement {
  return {
    apiVersion: "gitfleet.io/v1alpha1",
    kind: "Placement",
    metadata: { name: app },
    spec: {
      apps: [app],
      clusterAffinity: { clusterNames: [...clusters] },
      replicaScheduling: { type: "Duplicated" },
      ...(tolerateAll ? { tolerations: [{ operator: "Exists" }] } : {}),
      conflictResolution: "Abort",
    },
    origin: from.origin,
  };
}
