import { joinObserved } from "../status/observed-status.js";
import { SOURCE_STATUS_PATH, sourceStatusFromText } from "../status/status-files.js";
import { carrying, statusMessage } from "../status/status-message.js";
import { strayFiles } from "./rebuild-state.js";
import type { ReconcileOutcome, ReconcileState } from "./reconcile-step.js";

// What a status commit carries besides the reconcile's render: the autoscalers' files and a repair of
// what the branch held that gitfleet does not render, each riding on the reconcile's commit or a
// commit of its own; and the verdict a reconciled source commit already has. Pure.

// Whether an already reconciled source commit was valid, and how many errors status/source.yaml holds.
export function recordedVerdict(state: ReconcileState, head: string): { valid: boolean; errors: number } {
  if (state.renderedCommit === head) return { valid: true, errors: 0 };
  const text = state.files.get(SOURCE_STATUS_PATH);
  const errors = text === undefined ? 1 : sourceStatusFromText(text).errors;
  return { valid: false, errors: Math.max(1, errors) };
}

// The reconcile's outcome with the attached files added (their lines in the message), or an outcome
// of their own when the reconcile changed nothing.
export function withAttachment(
  found: { outcome: ReconcileOutcome; headTree: string | undefined } | undefined,
  attachment:
    | { readonly files: ReadonlyMap<string, string | null>; readonly notes: readonly string[] }
    | undefined,
  state: ReconcileState,
  renderedTree: string | undefined,
): { outcome: ReconcileOutcome; headTree: string | undefined } | undefined {
  if (!attachment || attachment.files.size === 0) return found;
  const notes = attachment.notes;
  const scaled = notes.map((note) => ({ kind: "scale" as const, line: `autoscale: ${note}` }));
  if (found) {
    const changes = new Map([...found.outcome.changes, ...attachment.files]);
    // An observation step that moved no replica is said by the attachment's lines alone.
    const message =
      found.outcome.quiet && notes.length > 0
        ? statusMessage("scale", `autoscale: ${notes.join("; ")}`)
        : carrying(found.outcome.message, scaled);
    return { ...found, outcome: { ...found.outcome, changes, message } };
  }
  return {
    headTree: renderedTree,
    outcome: {
      state,
      changes: new Map(attachment.files),
      message: statusMessage(
        "scale",
        `autoscale: ${notes.length > 0 ? notes.join("; ") : "autoscalers' status recorded"}`,
      ),
      valid: true,
      problems: [],
      scope: new Set(),
      summary: undefined,
    },
  };
}

// A repair rides on the reconcile's commit (its changes win where both write a file), or is a
// commit of its own when nothing else changed.
export function withRepair(
  found: { outcome: ReconcileOutcome; headTree: string | undefined } | undefined,
  repair: ReadonlyMap<string, string | null> | undefined,
  state: ReconcileState,
  renderedTree: string | undefined,
): { outcome: ReconcileOutcome; headTree: string | undefined } | undefined {
  if (!repair) return found;
  const written = [...repair.values()].filter((t) => t !== null).length;
  const note = `repair: the status branch held what gitfleet does not render from source commit ${state.renderedCommit?.slice(0, 7) ?? "(none)"}; ${written} files written again, ${repair.size - written} removed`;
  if (found) {
    const changes = new Map([...repair, ...found.outcome.changes]);
    const message = carrying(found.outcome.message, [{ kind: "reconcile", line: note }]);
    return { ...found, outcome: { ...found.outcome, changes, message } };
  }
  return {
    headTree: renderedTree,
    outcome: {
      state,
      changes: new Map(repair),
      message: statusMessage("reconcile", note),
      valid: true,
      problems: [],
      scope: new Set(),
      summary: undefined,
    },
  };
}

// After a rebuild that could not render, the first valid render removes the branch's files it does
// not account for (rebuild-state.ts's strayFiles).
export function withSweep(
  found: { outcome: ReconcileOutcome; headTree: string | undefined } | undefined,
): { outcome: ReconcileOutcome; headTree: string | undefined } | undefined {
  if (!found?.outcome.valid) return found;
  const stray = strayFiles(found.outcome.state);
  if (stray.length === 0) return found;
  const changes = new Map(found.outcome.changes);
  const files = new Map(found.outcome.state.files);
  for (const path of stray) {
    changes.set(path, null);
    files.delete(path);
  }
  return { ...found, outcome: { ...found.outcome, changes, state: { ...found.outcome.state, files } } };
}

// The changes as the branch would hold them: each status file with its observed block.
export function withObservedBlocks(
  changes: ReadonlyMap<string, string | null>,
  observed: ReadonlyMap<string, string>,
): Map<string, string | null> {
  const carried = new Map(changes);
  for (const [path, text] of changes) {
    const block = observed.get(path);
    if (text !== null && block !== undefined) carried.set(path, joinObserved(text, block));
  }
  return carried;
}

// What the sync's observations change on the branch: observed blocks appended to status files the
// render holds (whose block moved), and whole files the sync owns that differ.
export function observedChanges(
  state: ReconcileState,
  observed: ReadonlyMap<string, string>,
  syncFiles: ReadonlyMap<string, string>,
  blocks: ReadonlyMap<string, string>,
  files: ReadonlyMap<string, string>,
): Map<string, string> {
  const changes = new Map<string, string>();
  for (const [path, block] of blocks) {
    const base = state.files.get(path);
    if (base !== undefined && observed.get(path) !== block) changes.set(path, joinObserved(base, block));
  }
  for (const [path, text] of files) if (syncFiles.get(path) !== text) changes.set(path, text);
  return changes;
}
