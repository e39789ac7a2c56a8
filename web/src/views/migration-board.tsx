import type { FleetView } from "../api.js";
import { Badge, Problem, Section } from "../components.js";
import { ago } from "../format.js";

/** Every Migration's batches in order, each with its state, since when, why, and its apps' health per cluster. */
export function MigrationBoard({ fleet }: { fleet: { data?: FleetView; error?: string } }) {
  if (!fleet.data) return fleet.error ? <Problem message={fleet.error} /> : <p class="muted">Loading…</p>;
  const { migrations } = fleet.data;
  if (migrations.length === 0)
    return (
      <Section title="Migrations">
        <p class="muted">No Migration on the status branch (migrations/ in the fleet repo).</p>
      </Section>
    );
  return (
    <>
      {migrations.map((migration) => (
        <Section key={migration.migration} title={`Migration ${migration.migration}`}>
          <div class="board" data-testid={`migration-${migration.migration}`}>
            {migration.batches.map((batch) => (
              <article
                key={batch.name}
                class={`card batch state-${batch.state.toLowerCase()}`}
                data-batch={batch.name}
              >
                <header class="card-head">
                  <strong>{batch.name}</strong>
                  <Badge value={batch.state} />
                </header>
                <p class="muted small">
                  since {ago(batch.since)}
                  {batch.approvedIn ? ` · approved in ${batch.approvedIn.slice(0, 7)}` : ""}
                </p>
                {batch.reason ? <p class="reason">{batch.reason}</p> : null}
                <ul class="pairs">
                  {Object.entries(batch.apps).flatMap(([app, clusters]) =>
                    Object.entries(clusters).map(([cluster, health]) => (
                      <li key={`${app}/${cluster}`}>
                        {app} in {cluster} <Badge value={health} />
                      </li>
                    )),
                  )}
                </ul>
              </article>
            ))}
          </div>
          {migration.detached.length > 0 ? (
            <p class="muted small">detached: {migration.detached.join(", ")}</p>
          ) : null}
        </Section>
      ))}
    </>
  );
}
