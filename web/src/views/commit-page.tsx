import { type CommitDetail, useApi } from "../api.js";
import { Problem, Section } from "../components.js";
import { short } from "../format.js";

/** One status commit: its message, when, by whom, the source commit it reconciled and the files it changed. */
export function CommitPage({ id }: { id: string }) {
  const { data: commit, error } = useApi<CommitDetail>(`/api/commits/${encodeURIComponent(id)}`, id);
  if (!commit) return error ? <Problem message={error} /> : <p class="muted">Loading…</p>;
  return (
    <Section title={`Commit ${short(commit.commit)}`}>
      <p>
        <span class={`kind kind-${commit.kind}`}>{commit.kind}</span> <strong>{commit.subject}</strong>
      </p>
      <p class="muted small">
        {commit.author} · <time dateTime={commit.time}>{commit.time}</time>
        {commit.parent ? (
          <>
            {" "}
            · parent <a href={`#/commits/${commit.parent}`}>{short(commit.parent)}</a>
          </>
        ) : null}
        {commit.sourceCommit ? (
          <>
            {" "}
            · source <code>{commit.sourceCommit}</code>
          </>
        ) : null}
      </p>
      <p class="muted small">
        <code>git show {commit.commit}</code>
      </p>
      {commit.body.length > 0 ? <pre>{commit.body.join("\n")}</pre> : null}
      <h3>{commit.files.length} files changed</h3>
      <ul class="files">
        {commit.files.map((f) => (
          <li key={f.path} class={`file-${f.change}`}>
            <span class="change">{f.change === "added" ? "+" : f.change === "removed" ? "−" : "~"}</span>{" "}
            <code>{f.path}</code>
          </li>
        ))}
      </ul>
    </Section>
  );
}
