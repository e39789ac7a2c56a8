import { SOURCE_COMMIT_TRAILER, trailerBlock } from "../model/trailers.js";

// The status branch's history as a timeline: every status commit is an event, and its message says
// what happened. gitfleet writes those messages itself, so their subjects classify them.

/** What a status commit recorded. */
export type EventKind =
  | "reconcile"
  | "invalid"
  | "failover"
  | "scale"
  | "rollout"
  | "migration"
  | "sync"
  | "agent";

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
    kind: eventKind(subject, body),
    subject,
    body,
    ...(source ? { sourceCommit: source } : {}),
  };
}

/** The kind of a status commit, from its subject (and for a sync, whether it applied anything). */
export function eventKind(subject: string, body: readonly string[]): EventKind {
  if (subject.startsWith("failover:")) return "failover";
  if (subject.startsWith("autoscale:")) return "scale";
  if (/^Source [0-9a-f]+ is invalid/.test(subject)) return "invalid";
  if (/^agent \S+:/.test(subject)) return "agent";
  if (subject.startsWith("sync:")) {
    if (subject.includes("; migration:")) return "migration";
    return body.some((line) => /: [1-9][0-9]* applied/.test(line)) ? "rollout" : "sync";
  }
  return "reconcile";
}
