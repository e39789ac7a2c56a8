import type { AppDetail } from "../api.js";
import { useApi } from "../api.js";
import { Badge, Problem, Section } from "../components.js";
import { short } from "../format.js";
import { AppServices } from "./app-services.js";

type Workload = AppDetail["workloads"][number];

/**
 * One app: replicas per cluster (desired vs ready), clusters left out and why, its services (where
 * exported, imported and sent traffic), health per cluster, objects.
 */
export function AppPage({ name, version }: { name: string; version: string | null }) {
  const { data: app, error } = useApi<AppDetail>(`/api/apps/${encodeURIComponent(name)}`, version);
  if (!app) return error ? <Problem message={error} /> : <p class="muted">Loading…</p>;
  const clusters = Object.keys(app.clusters).sort();
  return (
    <>
      <div class="title-row">
        <h1>{app.name}</h1>
        <Badge value={app.health} testId="app-health" />
        <span class="muted small">
          last changed by source <code>{short(app.sourceCommit)}</code>
        </span>
      </div>
      {app.errors.length > 0 ? (
        <Problem message={`${app.errors.length} render errors: see status/apps/${app.name}.yaml`} />
      ) : null}
      {app.workloads.map((workload, index) => (
        <Section key={workload.resource} title={workload.resource}>
          <ReplicaChart workload={workload} index={index} />
          <p class="muted small">
            placement <strong>{workload.placement}</strong> · {workload.replicas} replicas
            {workload.autoscaledBy ? ` · total decided by ${workload.autoscaledBy}` : ""}
            {workload.scaleDownBy ? ` · division held by ${workload.scaleDownBy}` : ""}
            {workload.unschedulable > 0 ? ` · ${workload.unschedulable} unschedulable` : ""}
          </p>
          {workload.shortfall ? <Problem message={workload.shortfall} /> : null}
          <p class="diagnosis">{workload.summary}</p>
          <Room workload={workload} index={index} />
          <LeftOut workload={workload} index={index} />
        </Section>
      ))}
      <AppServices services={app.services ?? []} />
      <Section title="Health per cluster">
        <div class="scroll">
          <table data-testid="app-clusters">
            <thead>
              <tr>
                <th>cluster</th>
                <th>health</th>
                <th>objects</th>
                <th>runs source</th>
                <th>why</th>
              </tr>
            </thead>
            <tbody>
              {clusters.map((cluster) => {
                const entry = app.clusters[cluster];
                if (!entry) return null;
                return (
                  <tr key={cluster} data-cluster={cluster}>
                    <td>{cluster}</td>
                    <td>
                      <Badge value={entry.health} testId={`app-cluster-health-${cluster}`} />
                    </td>
                    <td class="num">{entry.objects}</td>
                    <td>
                      <code>{short(entry.syncedCommit)}</code>
                    </td>
                    <td class="reason">
                      {entry.held ? `${entry.held}: ` : ""}
                      {entry.reason ?? ""}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      </Section>
      <Section title="Objects">
        {clusters.map((cluster) => (
          <details key={cluster} class="objects">
            <summary>
              {cluster} ({app.objects[cluster]?.length ?? 0})
            </summary>
            <ul>
              {(app.objects[cluster] ?? []).map((o) => (
                <li key={o.path}>
                  <code>
                    {o.kind} {o.namespace ? `${o.namespace}/` : ""}
                    {o.name}
                  </code>{" "}
                  <span class="muted small">{o.path}</span>
                </li>
              ))}
            </ul>
          </details>
        ))}
      </Section>
    </>
  );
}

/** Per cluster two bars on one scale: desired (outline) and ready (filled), with the numbers. */
function ReplicaChart({ workload, index }: { workload: Workload; index: number }) {
  const rows = Object.entries(workload.clusters).sort(([a], [b]) => a.localeCompare(b));
  const max = Math.max(1, ...rows.map(([, c]) => Math.max(c.desired + (c.keeping ?? 0), c.ready ?? 0)));
  return (
    <div
      class="chart"
      data-testid={`chart-${index}`}
      role="img"
      aria-label={`${workload.resource}: replicas per cluster`}
    >
      {rows.map(([cluster, cell]) => (
        <div
          key={cluster}
          class="chart-row"
          data-testid={`bar-${index}-${cluster}`}
          data-desired={cell.desired}
          data-ready={cell.ready ?? ""}
        >
          <span class="chart-label">{cluster}</span>
          <span class="chart-bars">
            <span class="bar bar-desired" style={{ width: `${(100 * cell.desired) / max}%` }} />
            <span
              class={`bar bar-ready ${(cell.ready ?? 0) < cell.desired ? "bar-short" : ""}`}
              style={{ width: `${(100 * (cell.ready ?? 0)) / max}%` }}
            />
            {cell.keeping ? (
              <span
                class="bar bar-keeping"
                style={{ width: `${(100 * cell.keeping) / max}%` }}
                title="kept by failover"
              />
            ) : null}
          </span>
          <span class="chart-value">
            {cell.ready ?? "?"} ready / {cell.desired} desired
            {cell.keeping ? ` (+${cell.keeping} kept)` : ""}
          </span>
        </div>
      ))}
      <p class="legend small muted">
        <span class="swatch swatch-desired" /> desired <span class="swatch swatch-ready" /> ready
      </p>
    </div>
  );
}

function LeftOut({ workload, index }: { workload: Workload; index: number }) {
  const entries = Object.entries(workload.leftOut).sort(([a], [b]) => a.localeCompare(b));
  if (entries.length === 0) return null;
  return (
    <div class="left-out" data-testid={`left-out-${index}`}>
      <h3>Left out</h3>
      <ul>
        {entries.map(([cluster, reason]) => (
          <li key={cluster} data-cluster={cluster}>
            <strong>{cluster}</strong>: {reason}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** Per cluster, how many more replicas fit and what bounds them, from the nodes the members reported. */
function Room({ workload, index }: { workload: Workload; index: number }) {
  const room = Object.entries(workload.room ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
  if (room.length === 0) return null;
  return (
    <ul class="room small" data-testid={`workload-room-${index}`} aria-label="room for more replicas">
      {room.map(([cluster, text]) => (
        <li key={cluster} data-cluster={cluster}>
          <strong>{cluster}</strong> {text}
        </li>
      ))}
    </ul>
  );
}
