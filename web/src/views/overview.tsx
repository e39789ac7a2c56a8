import { useState } from "preact/hooks";
import type { AppView, ClusterView, FleetView } from "../api.js";
import { Badge, Meter, Problem, Section } from "../components.js";
import { ago, amount, plural } from "../format.js";

type Grouping = "region" | "provider";

/** Clusters grouped by region or provider with health and capacity; apps with replicas per cluster, worst first. */
export function Overview({ fleet }: { fleet: { data?: FleetView; error?: string } }) {
  const [grouping, setGrouping] = useState<Grouping>("region");
  if (!fleet.data) return fleet.error ? <Problem message={fleet.error} /> : <p class="muted">Loading…</p>;
  const { clusters, apps, source } = fleet.data;
  const groups = new Map<string, ClusterView[]>();
  for (const cluster of clusters) {
    const key = cluster[grouping] ?? "(none)";
    groups.set(key, [...(groups.get(key) ?? []), cluster]);
  }
  const names = clusters.map((c) => c.name).sort();
  return (
    <>
      {!source.valid ? (
        <Problem
          message={`The last source commit is invalid: ${source.errors} errors (status/source.yaml). The clusters keep the last valid render.`}
        />
      ) : null}
      <Section
        title={`Clusters (${clusters.length})`}
        aside={
          <label class="control">
            group by{" "}
            <select
              value={grouping}
              onChange={(e) => setGrouping((e.currentTarget as HTMLSelectElement).value as Grouping)}
            >
              <option value="region">region</option>
              <option value="provider">provider</option>
            </select>
          </label>
        }
      >
        {[...groups.entries()]
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([group, members]) => (
            <div class="group" key={group} data-testid={`group-${group}`}>
              <h3 class="group-name">
                {grouping} <strong>{group}</strong>
              </h3>
              <div class="cards">
                {members.map((cluster) => (
                  <ClusterCard key={cluster.name} cluster={cluster} />
                ))}
              </div>
            </div>
          ))}
      </Section>
      <Section title={`Apps (${apps.length})`}>
        <div class="scroll">
          <table class="apps" data-testid="apps-table">
            <thead>
              <tr>
                <th>app</th>
                <th>health</th>
                {names.map((n) => (
                  <th key={n} class="num">
                    {n}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {apps.map((app) => (
                <AppRow key={app.name} app={app} clusters={names} />
              ))}
            </tbody>
          </table>
        </div>
      </Section>
    </>
  );
}

function ClusterCard({ cluster }: { cluster: ClusterView }) {
  const capacity = cluster.capacity;
  return (
    <article class={`card state-${cluster.state.toLowerCase()}`} data-cluster={cluster.name}>
      <header class="card-head">
        <strong class="card-title">{cluster.name}</strong>
        <Badge value={cluster.state} testId={`cluster-state-${cluster.name}`} />
      </header>
      <p class="facts">
        {[cluster.provider, cluster.region, cluster.zone].filter(Boolean).join(" · ")}
        {cluster.mode === "pull" ? " · pull" : ""}
        {cluster.unschedulable ? " · cordoned" : ""}
        {cluster.version ? ` · ${cluster.version}` : ""}
      </p>
      {cluster.reason ? <p class="reason">{cluster.reason}</p> : null}
      {cluster.condition && !cluster.condition.ready ? (
        <p class="reason">since {ago(cluster.condition.since)}</p>
      ) : null}
      {capacity ? (
        <div class="meters">
          <Meter
            label="CPU"
            value={capacity.cpu.requested}
            max={capacity.cpu.allocatable}
            text={`${amount("cpu", capacity.cpu.requested)} / ${amount("cpu", capacity.cpu.allocatable)}`}
          />
          <Meter
            label="memory"
            value={capacity.memory.requested}
            max={capacity.memory.allocatable}
            text={`${amount("memory", capacity.memory.requested)} / ${amount("memory", capacity.memory.allocatable)}`}
          />
          <Meter
            label="pods"
            value={capacity.pods.requested}
            max={capacity.pods.allocatable}
            text={`${capacity.pods.requested} / ${capacity.pods.allocatable}`}
          />
          <p class="muted small">
            {capacity.readyNodes}/{capacity.nodes} nodes Ready
            {capacity.staleSince ? ` · last reading: stopped answering ${ago(capacity.staleSince)}` : ""}
          </p>
        </div>
      ) : (
        <p class="muted small">capacity not reported</p>
      )}
      {cluster.controlPlane ? (
        <ul class="components small" data-testid={`control-plane-${cluster.name}`}>
          <li class="muted">control plane on {cluster.controlPlane.host}</li>
          {Object.entries(cluster.controlPlane.components).map(([name, text]) => (
            <li key={name}>
              {name}: {text}
            </li>
          ))}
        </ul>
      ) : null}
      <p class="muted small">
        {plural(cluster.objects, "object")} · {plural(Object.keys(cluster.apps).length, "app")}
      </p>
    </article>
  );
}

function AppRow({ app, clusters }: { app: AppView; clusters: readonly string[] }) {
  return (
    <tr data-app={app.name}>
      <td>
        <a href={`#/apps/${encodeURIComponent(app.name)}`}>{app.name}</a>
      </td>
      <td>
        <Badge value={app.health} />
      </td>
      {clusters.map((cluster) => {
        const cells = app.workloads.map((w) => w.clusters[cluster]).filter((c) => c !== undefined);
        const inCluster = app.clusters[cluster];
        if (cells.length === 0)
          return (
            <td key={cluster} class="num muted">
              {inCluster ? "✓" : ""}
            </td>
          );
        const desired = cells.reduce((sum, c) => sum + c.desired, 0);
        const ready = cells.reduce((sum, c) => sum + (c.ready ?? 0), 0);
        return (
          <td
            key={cluster}
            class={`num ${ready < desired && inCluster?.health !== "Healthy" ? "short" : ""}`}
            title={`${ready} ready of ${desired}`}
          >
            {ready}/{desired}
          </td>
        );
      })}
    </tr>
  );
}
