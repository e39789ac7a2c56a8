import { useEffect, useState } from "preact/hooks";
import { type FleetView, getJson, type PlanAnswer } from "../api.js";
import { Problem, Section } from "../components.js";

/** `gitfleet plan` between two revisions: what every cluster gets, as the pull request's preview says. */
export function PlanPage({
  base,
  head,
  fleet,
}: {
  base: string;
  head: string;
  fleet: FleetView | undefined;
}) {
  const [answer, setAnswer] = useState<PlanAnswer>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  // Asking again for the same revisions plans again: a branch may have moved since.
  const [asked, setAsked] = useState(0);
  const defaultBase = base || fleet?.source.renderedCommit?.slice(0, 12) || "main";
  const defaultHead = head || "main";
  useEffect(() => {
    if (!base || !head) return;
    setBusy(true);
    setError(undefined);
    getJson<PlanAnswer>(`/api/plan?base=${encodeURIComponent(base)}&head=${encodeURIComponent(head)}`)
      .then(setAnswer, (e: unknown) => {
        setAnswer(undefined);
        setError(String((e as Error).message));
      })
      .finally(() => setBusy(false));
  }, [base, head, asked]);
  const submit = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const hash = `#/plan?base=${encodeURIComponent(String(form.get("base")))}&head=${encodeURIComponent(String(form.get("head")))}`;
    if (window.location.hash === hash) setAsked((n) => n + 1);
    else window.location.hash = hash;
  };
  return (
    <Section title="Plan">
      <form class="plan-form" onSubmit={submit}>
        <label>
          base <input name="base" defaultValue={defaultBase} spellcheck={false} />
        </label>
        <label>
          head <input name="head" defaultValue={defaultHead} spellcheck={false} />
        </label>
        <button type="submit" class="button" disabled={busy}>
          {busy ? "Planning…" : "Plan"}
        </button>
      </form>
      <p class="muted small">
        Branches, tags or commits of the fleet repo; the base is planned on top of what the status branch says
        runs.
      </p>
      {error ? <Problem message={error} /> : null}
      {answer ? (
        <div data-testid="plan">
          {answer.notes.map((note) => (
            <p key={note} class="reason">
              {note}
            </p>
          ))}
          <p>
            <strong>{answer.plan.changed ? "Changes" : "No changes"}</strong> from <code>{answer.base}</code>{" "}
            to <code>{answer.head}</code>
          </p>
          {(answer.plan.unplaced ?? [])
            .filter((u) => u.unplaced > 0)
            .map((u) => (
              <Problem key={u.message} message={u.message} />
            ))}
          {answer.plan.clusters.length > 0 ? (
            <table>
              <thead>
                <tr>
                  <th>cluster</th>
                  <th class="num">added</th>
                  <th class="num">changed</th>
                  <th class="num">removed</th>
                </tr>
              </thead>
              <tbody>
                {answer.plan.clusters.map((c) => (
                  <tr key={c.cluster}>
                    <td>{c.cluster}</td>
                    <td class="num">{c.added.length}</td>
                    <td class="num">{c.changed.length}</td>
                    <td class="num">{c.removed.length}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : null}
          <pre class="plan-text">{answer.text}</pre>
        </div>
      ) : null}
    </Section>
  );
}
