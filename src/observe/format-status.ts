import {
  compareVersions,
  format as formatVersion,
  type KubeVersion,
  parseGitVersion,
} from "../apimachinery/kube-version.js";
import { compareStrings } from "../model/file-tree.js";
import type { AppView, ClusterView, FleetView } from "./fleet-view.js";
import { textTable } from "./text-table.js";

/** More clusters than this and the apps table sums replicas instead of a column per cluster. */
const MAX_CLUSTER_COLUMNS = 8;

/**
 * `gitfleet status`: the fleet overview in the terminal — the clusters table, the apps table with
 * ready/desired replicas per cluster, both worst first, then why anything is not Healthy, and the
 * migrations' batches.
 */
export function formatStatus(view: FleetView): string {
  const lines: string[] = [];
  const source = view.source;
  lines.push(
    `status ${short(view.statusCommit)} · source ${short(source.sourceCommit)} ${
      source.valid
        ? "valid"
        : `INVALID (${source.errors} errors in status/source.yaml; rendered/ stays at ${short(source.renderedCommit)})`
    }`,
    "",
  );
  lines.push(
    ...textTable(
      [
        "CLUSTER",
        "STATE",
        "PROVIDER",
        "REGION",
        "MODE",
        "VERSION",
        "CPU",
        "MEMORY",
        "PODS",
        "OBJECTS",
        "REASON",
      ],
      view.clusters.map(clusterRow),
    ),
  );
  lines.push("");
  lines.push(...appsTable(view));
  const services = view.apps.flatMap((app) => app.services ?? []);
  if (services.length > 0) lines.push("", "Services:", ...services.map((s) => `  ${s.summary}`));
  const troubles = [...clusterTroubles(view.clusters), ...appTroubles(view.apps)];
  if (troubles.length > 0) lines.push("", "Not Healthy:", ...troubles.map((t) => `  ${t}`));
  const shortfalls = view.apps.flatMap((app) =>
    app.workloads.flatMap((w) => (w.shortfall ? [`${app.name}: ${w.shortfall}`] : [])),
  );
  if (shortfalls.length > 0) lines.push("", "Fit nowhere:", ...shortfalls.map((s) => `  ${s}`));
  if (view.migrations.length > 0) {
    lines.push("", "Migrations:");
    for (const migration of view.migrations)
      lines.push(
        `  ${migration.migration}: ${migration.batches.map((b) => `${b.name} ${b.state}`).join(", ")}`,
      );
  }
  if (view.upgrades && view.upgrades.length > 0) {
    lines.push("", "Control-plane upgrades:");
    for (const upgrade of view.upgrades)
      lines.push(
        `  ${upgrade.upgrade} → ${upgrade.version}: ${upgrade.batches.map((b) => `${b.name} ${b.state}`).join(", ")}`,
        ...upgrade.batches
          .filter((b) => b.state === "Failed" || b.state === "RolledBack")
          .map((b) => `    ${b.name}: ${b.reason ?? b.state}`),
      );
  }
  return `${lines.join("\n")}\n`;
}

function clusterRow(cluster: ClusterView): string[] {
  const capacity = cluster.capacity;
  const use = (resource: "cpu" | "memory" | "pods") =>
    capacity
      ? `${amount(resource, capacity[resource].requested)}/${amount(resource, capacity[resource].allocatable)}`
      : "-";
  return [
    cluster.name,
    cluster.state,
    cluster.provider ?? "-",
    cluster.region ?? "-",
    `${cluster.mode}${cluster.host ? `:${cluster.host}` : ""}${cluster.unschedulable ? ",cordoned" : ""}`,
    cluster.version ?? "-",
    use("cpu"),
    use("memory"),
    use("pods"),
    String(cluster.objects),
    cluster.reason ?? "",
  ];
}

function appsTable(view: FleetView): string[] {
  const used = new Set(view.apps.flatMap((app) => app.workloads.flatMap((w) => Object.keys(w.clusters))));
  const clusters = [...used].sort();
  if (clusters.length <= MAX_CLUSTER_COLUMNS)
    return textTable(
      ["APP", "HEALTH", ...clusters],
      view.apps.map((app) => [
        app.name,
        app.health,
        ...clusters.map((c) => replicas(app, c) ?? (app.clusters[c] ? "✓" : "-")),
      ]),
    );
  return textTable(
    ["APP", "HEALTH", "READY/DESIRED", "CLUSTERS"],
    view.apps.map((app) => {
      const cells = app.workloads.flatMap((w) => Object.values(w.clusters));
      const desired = cells.reduce((sum, c) => sum + c.desired, 0);
      const ready = cells.reduce((sum, c) => sum + (c.ready ?? 0), 0);
      return [
        app.name,
        app.health,
        cells.length > 0 ? `${ready}/${desired}` : "-",
        String(Object.keys(app.clusters).length),
      ];
    }),
  );
}

// Ready/desired of an app's workloads in one cluster; undefined when none of them runs there.
function replicas(app: AppView, cluster: string): string | undefined {
  const cells = app.workloads.flatMap((w) => (w.clusters[cluster] ? [w.clusters[cluster]] : []));
  if (cells.length === 0) return undefined;
  const desired = cells.reduce((sum, c) => sum + c.desired, 0);
  const ready = cells.reduce((sum, c) => sum + (c.ready ?? 0), 0);
  return `${ready}/${desired}`;
}

function clusterTroubles(clusters: readonly ClusterView[]): string[] {
  return [
    ...clusters
      .filter((c) => c.state !== "Healthy" && c.state !== "Progressing")
      .map((c) => `cluster ${c.name}: ${c.state}${c.reason ? ` — ${c.reason}` : ""}`),
    ...clusters
      .filter((c) => c.credential?.expiring)
      .map(
        (c) =>
          `cluster ${c.name}: gitfleet's ${c.credential?.kind === "token" ? "token" : "client certificate"} expires ${c.credential?.notAfter} — renew it: gitfleet join ${c.name}`,
      ),
  ];
}

function appTroubles(apps: readonly AppView[]): string[] {
  const lines: string[] = [];
  for (const app of apps)
    for (const [cluster, entry] of Object.entries(app.clusters).sort(([a], [b]) => (a < b ? -1 : 1)))
      if (entry.health === "Degraded" || entry.health === "Missing")
        lines.push(`${app.name} in ${cluster}: ${entry.health}${entry.reason ? ` — ${entry.reason}` : ""}`);
  return lines;
}

function short(commit: string | undefined): string {
  return commit ? commit.slice(0, 7) : "none";
}

/** CPU in cores, memory in Gi (Mi under 1Gi), pods by number. */
export function amount(resource: "cpu" | "memory" | "pods", value: number): string {
  if (value === 0) return "0";
  if (resource === "memory") {
    const gib = value / 2 ** 30;
    return gib >= 1 ? `${Number(gib.toFixed(gib >= 10 ? 0 : 1))}Gi` : `${Math.round(value / 2 ** 20)}Mi`;
  }
  if (resource === "cpu") return String(Number(value.toFixed(value >= 10 ? 0 : 1)));
  return String(Math.round(value));
}

/**
 * `gitfleet status --below <version>`: the clusters whose members last reported a Kubernetes version
 * older than `version` (a CVE's fixed release, say), oldest first, then those whose version is not
 * known yet. Pure.
 */
export function formatClustersBelow(view: FleetView, version: KubeVersion): { text: string; below: number } {
  const known = view.clusters
    .map((cluster) => ({ cluster, version: cluster.version ? parseGitVersion(cluster.version) : undefined }))
    .filter((entry): entry is { cluster: ClusterView; version: KubeVersion } => entry.version !== undefined);
  const below = known
    .filter((entry) => compareVersions(entry.version, version) < 0)
    .sort((a, b) => compareVersions(a.version, b.version) || compareStrings(a.cluster.name, b.cluster.name));
  const unknown = view.clusters.filter((cluster) => !known.some((entry) => entry.cluster === cluster));
  const target = formatVersion(version);
  const lines =
    below.length === 0
      ? [`No cluster reports a version below ${target}.`]
      : [
          `${below.length} cluster${below.length === 1 ? "" : "s"} below ${target}:`,
          ...textTable(
            ["CLUSTER", "VERSION", "MODE", "STATE"],
            below.map(({ cluster }) => [
              cluster.name,
              cluster.version ?? "-",
              `${cluster.mode}${cluster.host ? `:${cluster.host}` : ""}`,
              cluster.state,
            ]),
          ),
        ];
  if (unknown.length > 0)
    lines.push("", `Version not reported yet: ${unknown.map((c) => c.name).join(", ")}`);
  return { text: `${lines.join("\n")}\n`, below: below.length };
}

/** The same list as JSON: each cluster below the version with the version it reported. */
export function clustersBelowJson(
  view: FleetView,
  version: KubeVersion,
): { below: { cluster: string; version: string }[] } {
  return {
    below: view.clusters
      .filter((c) => {
        const reported = c.version ? parseGitVersion(c.version) : undefined;
        return reported !== undefined && compareVersions(reported, version) < 0;
      })
      .map((c) => ({ cluster: c.name, version: c.version as string })),
  };
}
