import { type EventKind, eventTrailer, SOURCE_COMMIT_TRAILER, trailerBlock } from "../model/trailers.js";

// The status branch's history as a timeline: every status commit is an event. Its Gitfleet-Event
// trailer says which, as its writer named it; the message is never read for it (a commit without
// the trailer is a plain reconcile).

export interface TimelineEvent {
  readonly commit: string;
  /** ISO time the commit was written. */
  readonly time: string;
  readonly kind: EventKind;
  readonly subject: string;
  /** The message's body lines, trailers left out. */
  readonly body: readonly string[];
  /** The source commit it reconciled (its Source-Commit trailer). */
  readonly sourceCommit?: string;
}

/** A status commit's event: its kind, subject, body and Source-Commit trailer. */
export function timelineEvent(commit: string, time: string, message: string): TimelineEvent {
  const lines = message.replace(/\n+$/, "").split("\n");
  const subject = lines[0] ?? "";
  const rest = lines.slice(1);
  // Trailers are the last paragraph when every line of it is "Key: value".
  const trailers = trailerBlock(message);
  const lastBreak = rest.lastIndexOf("");
  const body = (trailers ? rest.slice(0, Math.max(lastBreak, 0)) : rest).filter((line) => line !== "");
  const source = trailers?.get(SOURCE_COMMIT_TRAILER);
  return {
    commit,
    time,
    kind: eventTrailer(message) ?? "reconcile",
    subject,
    body,
    ...(source ? { sourceCommit: source } : {}),
  };
}
