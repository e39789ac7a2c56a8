import { asList, asMap } from "../../apimachinery/json.js";
import { compareStrings } from "../../model/file-tree.js";
import type { RenderedObject } from "../render-result.js";
import {
  ENDPOINTS_MANAGER,
  MANAGED_BY_LABEL,
  RECORD_ANNOTATION,
  SERVICE_ANNOTATION,
  SERVICE_NAME_LABEL,
  SOURCE_CLUSTER_LABEL,
} from "./service-objects.js";

// What a render does for each exported service, read from its objects alone (so a render restored
// from the status branch says the same): where it is exported from and imported in, which producing
// clusters its consumers' endpoints point at, and its DNS records. Plans, failover commits, status
// and metrics describe services with it. Pure.

/** One exported service as a render gives it. */
export interface ServiceView {
  /** "web.shop". */
  readonly service: string;
  readonly app: string;
  readonly exportedFrom: readonly string[];
  readonly importedIn: readonly string[];
  /** endpoints mode: the producing clusters consumers' EndpointSlices send traffic to (ready ones). */
  readonly endpoints?: readonly string[];
  /** dns mode: the record's name and the clusters it answers with. */
  readonly record?: { readonly name: string; readonly clusters: readonly string[] };
}

const EXPORT = "multicluster.x-k8s.io/ServiceExport/";
const IMPORT = "multicluster.x-k8s.io/ServiceImport/";
const SLICE = "discovery.k8s.io/EndpointSlice/";
const DNS_ENDPOINT = "externaldns.k8s.io/DNSEndpoint/";

interface Building {
  app: string;
  exportedFrom: Set<string>;
  importedIn: Set<string>;
  endpoints?: Set<string>;
  record?: { name: string; clusters: Set<string> };
}

/** Every exported service of a render, sorted by name. */
export function serviceViews(objects: readonly RenderedObject[]): ServiceView[] {
  const views = new Map<string, Building>();
  const view = (service: string, app: string): Building => {
    let found = views.get(service);
    if (!found) {
      found = { app, exportedFrom: new Set(), importedIn: new Set() };
      views.set(service, found);
    }
    return found;
  };
  for (const o of objects) {
    if (o.identity.startsWith(EXPORT)) view(serviceOf(o.identity, EXPORT), o.app).exportedFrom.add(o.cluster);
    else if (o.identity.startsWith(IMPORT))
      view(serviceOf(o.identity, IMPORT), o.app).importedIn.add(o.cluster);
    else if (o.identity.startsWith(SLICE)) addEndpoints(o, view);
    else if (o.identity.startsWith(DNS_ENDPOINT)) addRecord(o, view);
  }
  return [...views]
    .sort(([a], [b]) => compareStrings(a, b))
    .map(([service, b]) => ({
      service,
      app: b.app,
      exportedFrom: sorted(b.exportedFrom),
      importedIn: sorted(b.importedIn),
      ...(b.endpoints ? { endpoints: sorted(b.endpoints) } : {}),
      ...(b.record ? { record: { name: b.record.name, clusters: sorted(b.record.clusters) } } : {}),
    }));
}

// "group/Kind/namespace/name" → "name.namespace".
function serviceOf(identity: string, prefix: string): string {
  const [namespace, name] = identity.slice(prefix.length).split("/");
  return `${name}.${namespace}`;
}

function addEndpoints(o: RenderedObject, view: (service: string, app: string) => Building): void {
  const metadata = asMap(o.object.metadata);
  const labels = asMap(metadata.labels);
  if (labels[MANAGED_BY_LABEL] !== ENDPOINTS_MANAGER) return;
  const b = view(`${String(labels[SERVICE_NAME_LABEL])}.${String(metadata.namespace)}`, o.app);
  b.endpoints ??= new Set();
  const ready = asList(o.object.endpoints).some((e) => asMap(asMap(e).conditions).ready !== false);
  if (ready) b.endpoints.add(String(labels[SOURCE_CLUSTER_LABEL]));
}

function addRecord(o: RenderedObject, view: (service: string, app: string) => Building): void {
  const annotations = asMap(asMap(o.object.metadata).annotations);
  const service = annotations[SERVICE_ANNOTATION];
  if (typeof service !== "string") return;
  const b = view(service, o.app);
  b.record = { name: String(annotations[RECORD_ANNOTATION] ?? ""), clusters: new Set() };
  const endpoints = asList(asMap(o.object.spec).endpoints).map((e) => asMap(e));
  for (const e of endpoints) if (typeof e.setIdentifier === "string") b.record.clusters.add(e.setIdentifier);
}

function sorted(set: ReadonlySet<string>): string[] {
  return [...set].sort(compareStrings);
}

/**
 * What changes for each service from one render to another, one line each: "web.shop exported from
 * east, west (−north); imported in 3 clusters; DNS web.shop.example.com: −north". Services whose
 * view is the same are left out.
 */
export function serviceChanges(before: readonly ServiceView[], after: readonly ServiceView[]): string[] {
  const old = new Map(before.map((v) => [v.service, v]));
  const now = new Map(after.map((v) => [v.service, v]));
  const names = [...new Set([...old.keys(), ...now.keys()])].sort(compareStrings);
  const lines: string[] = [];
  for (const name of names) {
    const a = old.get(name);
    const b = now.get(name);
    if (a && b && JSON.stringify(a) === JSON.stringify(b)) continue;
    if (!b) {
      lines.push(`${name} no longer exported`);
      continue;
    }
    lines.push(serviceLine(b, a));
  }
  return lines;
}

/**
 * One service in a line — "web.shop exported from east, west; imported in 3 clusters; DNS
 * web.shop.example.com: east" — with what changed since `before` when given.
 */
export function serviceLine(view: ServiceView, before?: ServiceView): string {
  const parts = [
    `${view.service} exported from ${list(view.exportedFrom)}${delta(before?.exportedFrom, view.exportedFrom)}`,
    `imported in ${view.importedIn.length} cluster${view.importedIn.length === 1 ? "" : "s"}${delta(before?.importedIn, view.importedIn)}`,
  ];
  if (view.endpoints)
    parts.push(`endpoints ${list(view.endpoints)}${delta(before?.endpoints, view.endpoints)}`);
  if (view.record)
    parts.push(
      `DNS ${view.record.name}: ${list(view.record.clusters)}${delta(before?.record?.clusters, view.record.clusters)}`,
    );
  return parts.join("; ");
}

function list(clusters: readonly string[]): string {
  return clusters.length === 0 ? "none" : clusters.join(", ");
}

// " (+a −b)" against what was there before; nothing when the same or new.
function delta(before: readonly string[] | undefined, after: readonly string[]): string {
  if (!before) return "";
  const added = after.filter((c) => !before.includes(c)).map((c) => `+${c}`);
  const removed = before.filter((c) => !after.includes(c)).map((c) => `−${c}`);
  const all = [...added, ...removed];
  return all.length === 0 ? "" : ` (${all.join(" ")})`;
}

/**
 * Where traffic to services moved, in a few words each ("web.shop −west", "DNS web.shop.example.com
 * +west"): the part of a failover commit's subject that says what was withdrawn or restored.
 */
export function trafficMoves(before: readonly ServiceView[], after: readonly ServiceView[]): string[] {
  const old = new Map(before.map((v) => [v.service, v]));
  const moves: string[] = [];
  for (const view of after) {
    const previous = old.get(view.service);
    if (!previous) continue;
    if (view.endpoints && previous.endpoints) {
      const d = delta(previous.endpoints, view.endpoints);
      if (d) moves.push(`endpoints ${view.service}${d.replace(/^ \((.*)\)$/, " $1")}`);
    }
    if (view.record && previous.record) {
      const d = delta(previous.record.clusters, view.record.clusters);
      if (d) moves.push(`DNS ${view.record.name}${d.replace(/^ \((.*)\)$/, " $1")}`);
    }
  }
  return moves;
}
