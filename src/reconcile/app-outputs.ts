import { compareStrings } from "../model/file-tree.js";
import type { RenderResult, WorkloadDecision } from "../render/render-result.js";
import { type AppOutput, appStatusText } from "../status/status-files.js";
import type { ChangeSummary, ClusterCounts } from "./commit-message.js";

// What a render gives each app, and how two renders' outputs differ: the rendered/ files, the
// objects per cluster and the workloads that moved.

export const NO_OUTPUT: AppOutput = { objects: [], decisions: [], errors: [] };

// The output of the given apps, in one pass over the render.
export function outputsOf(render: RenderResult, apps: ReadonlySet<string>): Map<string, AppOutput> {
  const outputs = new Map<
    string,
    {
      objects: RenderResult["objects"][number][];
      decisions: WorkloadDecision[];
      errors: RenderResult["errors"][number][];
    }
  >();
  const entry = (app: string) => {
    let found = outputs.get(app);
    if (!found) {
      found = { objects: [], decisions: [], errors: [] };
      outputs.set(app, found);
    }
    return found;
  };
  for (const object of render.objects) if (apps.has(object.app)) entry(object.app).objects.push(object);
  for (const decision of render.decisions)
    if (apps.has(decision.app)) entry(decision.app).decisions.push(decision);
  for (const error of render.errors) if (apps.has(error.app)) entry(error.app).errors.push(error);
  return outputs;
}

// Same objects, and the same decisions and errors as the app's status file states them.
export function sameOutput(app: string, a: AppOutput, b: AppOutput): boolean {
  return (
    a.objects.length === b.objects.length &&
    a.objects.every((o, i) => o.path === b.objects[i]?.path && o.text === b.objects[i]?.text) &&
    appStatusText(app, "", a) === appStatusText(app, "", b)
  );
}

// Adds the rendered/ files that differ to `changes` and counts them per cluster.
export function objectChanges(
  before: ReadonlyMap<string, AppOutput>,
  after: ReadonlyMap<string, AppOutput>,
  changes: Map<string, string | null>,
): Map<string, ClusterCounts> {
  const counts = new Map<string, ClusterCounts>();
  const count = (cluster: string, what: keyof ClusterCounts) => {
    const entry = counts.get(cluster) ?? { added: 0, changed: 0, removed: 0 };
    entry[what]++;
    counts.set(cluster, entry);
  };
  const old = new Map([...before.values()].flatMap((o) => o.objects).map((o) => [o.path, o]));
  const now = new Map([...after.values()].flatMap((o) => o.objects).map((o) => [o.path, o]));
  for (const [path, object] of now) {
    const previous = old.get(path);
    if (previous?.text === object.text) continue;
    changes.set(path, object.text);
    count(object.cluster, previous ? "changed" : "added");
  }
  for (const [path, object] of old)
    if (!now.has(path)) {
      changes.set(path, null);
      count(object.cluster, "removed");
    }
  return counts;
}

export function objectsOn(render: RenderResult, cluster: string): RenderResult["objects"] {
  return render.objects.filter((o) => o.cluster === cluster);
}

export function distributionChanges(
  before: ReadonlyMap<string, AppOutput>,
  after: ReadonlyMap<string, AppOutput>,
  apps: readonly string[],
): ChangeSummary["distributions"] {
  const moves: { before?: WorkloadDecision; after?: WorkloadDecision }[] = [];
  for (const app of apps) {
    const old = new Map((before.get(app)?.decisions ?? []).map((d) => [d.identity, d]));
    const now = new Map((after.get(app)?.decisions ?? []).map((d) => [d.identity, d]));
    for (const identity of [...new Set([...old.keys(), ...now.keys()])].sort(compareStrings)) {
      const a = old.get(identity);
      const b = now.get(identity);
      if (
        a &&
        b &&
        JSON.stringify(a.decision.clusters) === JSON.stringify(b.decision.clusters) &&
        a.replicas === b.replicas
      )
        continue;
      moves.push({ ...(a ? { before: a } : {}), ...(b ? { after: b } : {}) });
    }
  }
  return moves;
}
