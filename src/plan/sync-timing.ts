import { asMap } from "../apimachinery/json.js";
import { compareStrings } from "../model/file-tree.js";
import { describeIdentity } from "../model/identity.js";
import { syncRoleOf } from "../model/sync-annotations.js";
import type { FleetModel } from "../model/types.js";
import type { RenderedObject } from "../render/render-result.js";
import { windowVerdict } from "../sync/sync-windows.js";
import type { Plan } from "./plan.js";

/**
 * When each app a plan changes will actually apply, per cluster, as the sync will decide it: held
 * while suspended (App, Placement or Cluster), deferred by a closed sync window until it opens,
 * after the apps it depends on stand Healthy, with its hooks and sync waves in order. Pure: `now`
 * is given.
 */
export function syncTiming(
  plan: Plan,
  model: FleetModel,
  objects: readonly RenderedObject[],
  now: number,
): string[] {
  const changed = changedApps(plan, objects);
  const lines: string[] = [];
  for (const [app, clusters] of [...changed].sort(([a], [b]) => compareStrings(a, b)))
    lines.push(...appTiming(app, [...clusters].sort(compareStrings), model, objects, now));
  return lines;
}

// The apps each cluster's plan touches, from the paths of the objects added, changed or removed.
function changedApps(plan: Plan, objects: readonly RenderedObject[]): Map<string, Set<string>> {
  const appOf = new Map(objects.map((o) => [o.path, o.app]));
  const apps = new Map<string, Set<string>>();
  for (const cluster of plan.clusters)
    for (const change of [...cluster.added, ...cluster.changed]) {
      const app = appOf.get(change.path);
      if (!app) continue;
      apps.set(app, (apps.get(app) ?? new Set()).add(cluster.cluster));
    }
  return apps;
}

function appTiming(
  app: string,
  clusters: readonly string[],
  model: FleetModel,
  objects: readonly RenderedObject[],
  now: number,
): string[] {
  const spec = model.apps.find((a) => a.name === app)?.definition?.spec;
  if (spec?.suspend) return [`${app}: suspended (App spec.suspend): nothing applies until it is resumed`];
  const lines: string[] = [];
  const mine = objects.filter((o) => o.app === app && clusters.includes(o.cluster));
  const suspendedPlacements = model.placements.filter(
    (p) => p.spec.suspend === true && (p.spec.apps?.includes(app) || placedBy(mine, p.metadata.name)),
  );
  for (const p of suspendedPlacements)
    lines.push(`${app}: what Placement ${p.metadata.name} places waits while it is suspended (spec.suspend)`);
  for (const cluster of clusters) {
    const where = model.clusters.find((c) => c.metadata.name === cluster);
    if (where?.spec.suspend) {
      lines.push(
        `${app} in ${cluster}: cluster suspended (Cluster spec.suspend): applies once it is resumed`,
      );
      continue;
    }
    const verdict = windowVerdict(model.fleet?.spec.syncWindows, app, cluster, now);
    if (!verdict.open)
      lines.push(
        `${app} in ${cluster}: ${verdict.reason}; applies ${verdict.opensAt === undefined ? "when a window lets it (none opens within 400 days)" : `at ${new Date(verdict.opensAt).toISOString()}`}`,
      );
  }
  if (spec?.dependsOn?.length)
    lines.push(
      `${app}: applies in each cluster once ${spec.dependsOn.join(", ")} ${spec.dependsOn.length === 1 ? "stands" : "stand"} Healthy there at the rendered commit`,
    );
  lines.push(...orderLines(app, mine));
  return lines;
}

const placedBy = (objects: readonly RenderedObject[], placement: string) =>
  objects.some((o) =>
    String(asMap(asMap(o.object.metadata).annotations)["gitfleet.io/placement"] ?? "")
      .split(",")
      .includes(placement),
  );

// Hooks in phase order and the sync waves, as the sync will run them (one cluster's rendering).
function orderLines(app: string, objects: readonly RenderedObject[]): string[] {
  const first = objects[0]?.cluster;
  const one = objects.filter((o) => o.cluster === first);
  const phases = new Map<string, string[]>();
  const waves = new Set<number>();
  for (const o of one) {
    const role = syncRoleOf(asMap(asMap(o.object.metadata).annotations));
    if (role.kind === "object") waves.add(role.wave);
    if (role.kind !== "hook") continue;
    for (const phase of role.hook.phases)
      phases.set(phase, [...(phases.get(phase) ?? []), describeIdentity(o.identity)]);
  }
  const lines: string[] = [];
  const pre = phases.get("PreSync");
  if (pre)
    lines.push(
      `${app}: PreSync hooks run first in each cluster (${pre.join(", ")}); a failure stops the sync there`,
    );
  if (waves.size > 1)
    lines.push(
      `${app}: applies in sync waves ${[...waves].sort((a, b) => a - b).join(", ")}, each once the one before is Healthy`,
    );
  const post = phases.get("PostSync");
  if (post) lines.push(`${app}: PostSync hooks run once it is Healthy (${post.join(", ")})`);
  return lines;
}
