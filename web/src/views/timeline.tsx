import { useEffect, useState } from "preact/hooks";
import { EVENT_KINDS } from "../../../src/model/trailers.js";
import { getJson, type TimelineEvent } from "../api.js";
import { Problem, Section } from "../components.js";
import { ago, short } from "../format.js";

// Every kind the controller writes on the status branch (shard reports live on branches of their own).
const KINDS = EVENT_KINDS.filter((kind) => kind !== "shard");
const PAGE = 50;

/** The status branch's history, newest first: every reconcile, failover, scale event and rollout, each a commit. */
export function Timeline({ version, kind }: { version: string | null; kind: string }) {
  const [events, setEvents] = useState<TimelineEvent[]>([]);
  const [error, setError] = useState<string>();
  const [more, setMore] = useState(false);
  useEffect(() => {
    getJson<{ events: TimelineEvent[] }>(`/api/history?limit=${PAGE}`).then(
      ({ events: fresh }) => {
        // Keep older pages already loaded: the newest page replaces the top.
        setEvents((old) => {
          const known = new Set(fresh.map((e) => e.commit));
          const last = fresh.at(-1)?.commit;
          const rest =
            last && old.some((e) => e.commit === last)
              ? old.slice(old.findIndex((e) => e.commit === last) + 1)
              : [];
          return [...fresh, ...rest.filter((e) => !known.has(e.commit))];
        });
        setMore(fresh.length === PAGE);
      },
      (e: unknown) => setError(String((e as Error).message)),
    );
  }, [version]);
  const loadMore = () => {
    const parentOfLast = events.at(-1)?.commit;
    if (!parentOfLast) return;
    getJson<{ commit: string; parent?: string }>(`/api/commits/${parentOfLast}`)
      .then(({ parent }) =>
        parent
          ? getJson<{ events: TimelineEvent[] }>(`/api/history?limit=${PAGE}&before=${parent}`)
          : { events: [] },
      )
      .then(({ events: older }) => {
        setEvents((old) => [...old, ...older]);
        setMore(older.length === PAGE);
      })
      .catch((e: unknown) => setError(String((e as Error).message)));
  };
  const shown = kind ? events.filter((e) => e.kind === kind) : events;
  return (
    <Section
      title="Timeline"
      aside={
        <nav class="chips">
          <a href="#/timeline" class={kind ? "chip" : "chip active"}>
            all
          </a>
          {KINDS.map((k) => (
            <a
              key={k}
              href={`#/timeline?kind=${k}`}
              class={kind === k ? `chip active kind-${k}` : `chip kind-${k}`}
            >
              {k}
            </a>
          ))}
        </nav>
      }
    >
      {error ? <Problem message={error} /> : null}
      <ol class="timeline" data-testid="timeline">
        {shown.map((event) => (
          <li key={event.commit} class={`event event-${event.kind}`} data-kind={event.kind}>
            <div class="event-head">
              <span class={`kind kind-${event.kind}`}>{event.kind}</span>
              <a class="event-subject" href={`#/commits/${event.commit}`}>
                {event.subject}
              </a>
            </div>
            <div class="event-meta muted small">
              <time dateTime={event.time} title={event.time}>
                {ago(event.time)}
              </time>{" "}
              · status <a href={`#/commits/${event.commit}`}>{short(event.commit)}</a>
              {event.sourceCommit ? (
                <>
                  {" "}
                  · source <code>{short(event.sourceCommit)}</code>
                </>
              ) : null}
            </div>
            {event.body.length > 0 ? (
              <details>
                <summary class="small">
                  {event.body.length} {event.body.length === 1 ? "line" : "lines"}
                </summary>
                <pre>{event.body.join("\n")}</pre>
              </details>
            ) : null}
          </li>
        ))}
      </ol>
      {shown.length === 0 && !error ? <p class="muted">Nothing yet.</p> : null}
      {more ? (
        <button type="button" class="button" onClick={loadMore}>
          Older
        </button>
      ) : null}
    </Section>
  );
}
