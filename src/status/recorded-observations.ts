import { parse } from "yaml";
import { isJsonMap, type Json, type JsonMap } from "../apimachinery/json.js";
import { type ClusterCapacity, readCapacityRecord } from "../model/node-capacity.js";
import type { EntryPoints } from "../model/observed-state.js";
import { readServedApis, type ServedApis } from "../model/served-apis.js";
import { readEmittedYaml } from "../render/yaml-reader.js";
import { entryPointsOf, readEntryPoints } from "../sync/entry-points.js";
import type { ClusterSyncResult } from "../sync/sync-result.js";
import { AGENTS_DIRECTORY, CLUSTERS_DIRECTORY } from "./layout.js";
import { type AgentReport, agentReportPath, joinObserved, splitObserved } from "./observed-status.js";
import { clusterStatusPath } from "./status-files.js";

// What the members were last seen to have, as the status branch records it (or as this round's syncs
// and agents' reports say it): the observed inputs of scheduling that outlive one process, so
// `gitfleet plan`, `gitfleet render --status` and a restarted controller decide from the same state.

/** Per cluster, the observed values scheduling reads. */
export interface RecordedClusters {
  readonly capacity: Map<string, ClusterCapacity>;
  readonly served: Map<string, ServedApis>;
  /** Per cluster, its LoadBalancer Services' addresses (exported services' entry points). */
  readonly entryPoints: Map<string, EntryPoints>;
}

/**
 * Reads status/clusters/<cluster>.yaml's observed blocks and the agents' reports under status/agents/
 * (a push-mode cluster's own file wins over a stale agent report). Files that do not read are
 * skipped: they count as nothing observed. Pure.
 */
export function recordedClusters(files: ReadonlyMap<string, string>): RecordedClusters {
  const recorded: RecordedClusters = { capacity: new Map(), served: new Map(), entryPoints: new Map() };
  for (const directory of [AGENTS_DIRECTORY, CLUSTERS_DIRECTORY])
    for (const [path, text] of files) {
      if (!path.startsWith(directory) || !path.endsWith(".yaml")) continue;
      const cluster = path.slice(directory.length, -".yaml".length);
      if (cluster.includes("/")) continue;
      take(recorded, cluster, observedBlock(text, directory === AGENTS_DIRECTORY));
    }
  return recorded;
}

/**
 * Per cluster asked for, the Kubernetes version its /version reported as status/clusters/<cluster>.yaml
 * records it (observed.kubernetesVersion): what a restarted controller orders a hosted control
 * plane's components by until it has synced the hosted cluster again. Pure.
 */
export function recordedVersions(
  files: ReadonlyMap<string, string>,
  clusters: Iterable<string>,
): Map<string, string> {
  const versions = new Map<string, string>();
  for (const cluster of clusters) {
    const text = files.get(`${CLUSTERS_DIRECTORY}${cluster}.yaml`);
    const version = text === undefined ? undefined : observedBlock(text, false)?.kubernetesVersion;
    if (typeof version === "string" && version.length <= 128) versions.set(cluster, version);
  }
  return versions;
}

/**
 * This round's reports over what the status branch records of the clusters nobody reported yet (a
 * restart's first rounds, a member that does not answer): what the render divides by, the same the
 * branch gives `gitfleet plan`. `observedBlock` reads a status file's observed block, `syncFiles` the
 * agents' reports. Pure.
 */
export function withRecorded(
  clusters: Iterable<string>,
  reported: RecordedClusters,
  observedBlock: (path: string) => string | undefined,
  syncFiles: ReadonlyMap<string, string>,
): RecordedClusters {
  const files = new Map<string, string>();
  for (const cluster of clusters) {
    if (reported.capacity.has(cluster) && reported.served.has(cluster)) continue;
    const path = clusterStatusPath(cluster);
    const block = observedBlock(path);
    if (block !== undefined) files.set(path, joinObserved("", block));
    const report = syncFiles.get(agentReportPath(cluster));
    if (report !== undefined) files.set(agentReportPath(cluster), report);
  }
  const recorded = recordedClusters(files);
  return {
    capacity: new Map([...recorded.capacity, ...reported.capacity]),
    served: new Map([...recorded.served, ...reported.served]),
    entryPoints: new Map([...recorded.entryPoints, ...reported.entryPoints]),
  };
}

/** The same values from this round's syncs (push mode) and agents' reports (pull mode). Pure. */
export function reportedClusters(
  results: ReadonlyMap<string, ClusterSyncResult>,
  reports: ReadonlyMap<string, AgentReport>,
): RecordedClusters {
  const reported: RecordedClusters = { capacity: new Map(), served: new Map(), entryPoints: new Map() };
  for (const [cluster, report] of reports) take(reported, cluster, report.observed);
  for (const [cluster, result] of results) {
    if (result.capacity) reported.capacity.set(cluster, result.capacity);
    if (result.served) reported.served.set(cluster, result.served);
    // A cluster synced without an answer keeps what was recorded of it.
    if (result.reachable) reported.entryPoints.set(cluster, entryPointsOf(result));
  }
  return reported;
}

// A cluster's observed block as recorded (or reported): its capacity and served APIs, read bounded.
function take(into: RecordedClusters, cluster: string, observed: JsonMap | undefined): void {
  const capacity = readCapacityRecord(observed?.capacity);
  if (capacity) into.capacity.set(cluster, capacity);
  const apis = readServedApis(observed?.apis);
  if (apis) into.served.set(cluster, apis);
  const entryPoints = readEntryPoints(observed?.services);
  if (entryPoints) into.entryPoints.set(cluster, entryPoints);
}

function observedBlock(text: string, agentReport: boolean): JsonMap | undefined {
  let value: Json | undefined;
  try {
    const block = agentReport ? text : (splitObserved(text).observed ?? "");
    value = readEmittedYaml(block) ?? (parse(block, { maxAliasCount: 0 }) as Json);
  } catch {
    return undefined;
  }
  const observed = isJsonMap(value) ? value.observed : undefined;
  return isJsonMap(observed) ? observed : undefined;
}
