import { asMap, type JsonMap } from "../apimachinery/json.js";
import { argsByName } from "../manifests/controlplane/component-args.js";
import { compareStrings } from "../model/file-tree.js";
import type { RenderedObject, RenderResult } from "../render/render-result.js";

/** One component of a hosted control plane (or shared etcd) whose pods a change touches. */
export interface ControlPlaneChange {
  readonly host: string;
  /** "pc-1" for a hosted cluster's control plane, "etcd etcd-a" for a shared etcd. */
  readonly plane: string;
  /** The workload's name in the host: kube-apiserver, etcd, etcd-backup. */
  readonly component: string;
  readonly kind: string;
  /** Image changes, per container. */
  readonly images: readonly { readonly from: string; readonly to: string }[];
  /** Flags added (from undefined), removed (to undefined) or changed. */
  readonly flags: readonly { readonly name: string; readonly from?: string; readonly to?: string }[];
  /** Its pods are replaced (the pod template changed): for an API server, it restarts. */
  readonly restarts: boolean;
  /** Created or deleted with the change rather than changed. */
  readonly lifecycle?: "created" | "deleted";
}

const WORKLOAD_KINDS = new Set(["Deployment", "StatefulSet", "CronJob"]);

/**
 * What a change does to hosted control planes, component by component: every image and flag that
 * changes on each host, and which components' pods are replaced — for kube-apiserver, which API
 * servers restart. Read from the rendered objects of the hosts alone (their labels name the hosted
 * cluster or shared etcd). Pure.
 */
export function controlPlaneChanges(base: RenderResult, head: RenderResult): ControlPlaneChange[] {
  const before = planeWorkloads(base);
  const after = planeWorkloads(head);
  const changes: ControlPlaneChange[] = [];
  for (const path of [...new Set([...before.keys(), ...after.keys()])].sort(compareStrings)) {
    const old = before.get(path);
    const now = after.get(path);
    const change = compare(old, now);
    if (change) changes.push(change);
  }
  return changes.sort(
    (a, b) =>
      compareStrings(a.host, b.host) ||
      compareStrings(a.plane, b.plane) ||
      compareStrings(a.component, b.component),
  );
}

function planeWorkloads(render: RenderResult): Map<string, RenderedObject> {
  const found = new Map<string, RenderedObject>();
  for (const object of render.objects)
    if (WORKLOAD_KINDS.has(String(object.object.kind)) && planeOf(object.object) !== undefined)
      found.set(object.path, object);
  return found;
}

function planeOf(object: JsonMap): string | undefined {
  const labels = asMap(asMap(object.metadata).labels);
  const hosted = labels["gitfleet.io/hosted-cluster"];
  const shared = labels["gitfleet.io/shared-etcd"];
  if (typeof hosted === "string") return hosted;
  return typeof shared === "string" ? `etcd ${shared}` : undefined;
}

function compare(
  old: RenderedObject | undefined,
  now: RenderedObject | undefined,
): ControlPlaneChange | undefined {
  const either = (now ?? old) as RenderedObject;
  const head = {
    host: either.cluster,
    plane: planeOf(either.object) as string,
    component: String(asMap(either.object.metadata).name),
    kind: String(either.object.kind),
  };
  if (!old || !now) {
    const lifecycle = old ? ("deleted" as const) : ("created" as const);
    return { ...head, images: [], flags: [], restarts: false, lifecycle };
  }
  const a = podSpec(old.object);
  const b = podSpec(now.object);
  const images = imageChanges(a, b);
  const flags = flagChanges(a, b);
  const restarts = JSON.stringify(template(old.object)) !== JSON.stringify(template(now.object));
  if (images.length === 0 && flags.length === 0 && !restarts) return undefined;
  return { ...head, images, flags, restarts: restarts && head.kind !== "CronJob" };
}

// The pod template of a Deployment or StatefulSet, or a CronJob's job's.
function template(object: JsonMap): JsonMap {
  const spec = asMap(object.spec);
  return object.kind === "CronJob"
    ? asMap(asMap(asMap(spec.jobTemplate).spec).template)
    : asMap(spec.template);
}

function podSpec(object: JsonMap): JsonMap {
  return asMap(template(object).spec);
}

function containers(spec: JsonMap): JsonMap[] {
  return Array.isArray(spec.containers) ? (spec.containers as JsonMap[]) : [];
}

function imageChanges(a: JsonMap, b: JsonMap): { from: string; to: string }[] {
  const before = new Map(containers(a).map((c) => [String(c.name), String(c.image)]));
  return containers(b)
    .map((c) => ({ from: before.get(String(c.name)), to: String(c.image) }))
    .filter(
      (change): change is { from: string; to: string } =>
        change.from !== undefined && change.from !== change.to,
    );
}

function flagChanges(a: JsonMap, b: JsonMap): { name: string; from?: string; to?: string }[] {
  const flagsOf = (spec: JsonMap) =>
    argsByName(containers(spec).flatMap((c) => [...(Array.isArray(c.args) ? c.args : [])]));
  const before = flagsOf(a);
  const after = flagsOf(b);
  const names = [...new Set([...before.keys(), ...after.keys()])].sort(compareStrings);
  return names
    .filter((name) => before.get(name) !== after.get(name))
    .map((name) => {
      const from = before.get(name);
      const to = after.get(name);
      return { name, ...(from !== undefined ? { from } : {}), ...(to !== undefined ? { to } : {}) };
    });
}

/** The plan's lines for control planes: per host and plane, each component's images, flags and restart. */
export function controlPlaneLines(changes: readonly ControlPlaneChange[]): string[] {
  const lines: string[] = [];
  let group = "";
  for (const change of changes) {
    const heading = `${change.plane === change.host ? change.plane : describePlane(change.plane)} on ${change.host}:`;
    if (heading !== group) lines.push(heading);
    group = heading;
    lines.push(`  ${change.component}: ${describeChange(change)}`);
    for (const image of change.images) lines.push(`    image ${image.from} → ${image.to}`);
    for (const flag of change.flags) lines.push(`    ${describeFlag(flag)}`);
  }
  return lines;
}

function describePlane(plane: string): string {
  return plane.startsWith("etcd ") ? `shared ${plane}` : `control plane of ${plane}`;
}

function describeChange(change: ControlPlaneChange): string {
  if (change.lifecycle) return change.lifecycle;
  if (!change.restarts) return "changes without replacing its pods";
  if (change.component === "kube-apiserver") return "API server restarts (rolling)";
  return "pods replaced (rolling)";
}

function describeFlag(flag: { name: string; from?: string; to?: string }): string {
  if (flag.from === undefined) return `flag --${flag.name}=${flag.to} added`;
  if (flag.to === undefined) return `flag --${flag.name}=${flag.from} removed`;
  return `flag --${flag.name}: ${flag.from} → ${flag.to}`;
}
