import type { EventKind } from "../model/trailers.js";

/** One thing a status commit records: what kind of event it is, and the line people read. */
export interface StatusEvent {
  readonly kind: EventKind;
  readonly line: string;
}

/**
 * A status commit's message as data: the event that names the commit (its kind is the commit's
 * Gitfleet-Event trailer, its line the subject), the body its writer composed under that subject,
 * and the events the commit carries besides (an autoscaler's totals on a failover, a repair on a
 * render), a line each, in a paragraph per writer that added them. Nothing reads a kind back out of
 * the text.
 */
export interface StatusMessage {
  readonly head: StatusEvent;
  readonly body: readonly string[];
  readonly carried: readonly (readonly StatusEvent[])[];
}

/** A message of one event, with the body lines its writer composed. */
export function statusMessage(kind: EventKind, subject: string, body: readonly string[] = []): StatusMessage {
  return { head: { kind, line: subject }, body, carried: [] };
}

/** The message with more events carried: a paragraph of their lines after what it has. */
export function carrying(message: StatusMessage, events: readonly StatusEvent[]): StatusMessage {
  return events.length === 0 ? message : { ...message, carried: [...message.carried, events] };
}

/** The event kind the Gitfleet-Event trailer names: the head's. */
export function eventKindOf(message: StatusMessage): EventKind {
  return message.head.kind;
}

/** Every kind the commit records, the head's first, each once. */
export function eventKindsOf(message: StatusMessage): EventKind[] {
  return [...new Set([message.head.kind, ...message.carried.flat().map((e) => e.kind)])];
}

/** The text of the commit message (the writer adds the trailers): subject, body, carried events. */
export function messageText(message: StatusMessage): string {
  const paragraphs = [message.head.line];
  if (message.body.length > 0) paragraphs.push(message.body.join("\n"));
  for (const events of message.carried) paragraphs.push(events.map((e) => e.line).join("\n"));
  return paragraphs.join("\n\n");
}

/**
 * A sync's message headed by the steps of batches it records (a migration's, an upgrade's, a
 * restore's): the subject names them after the sync's ("sync: east Healthy; migration: m/b1: Syncing
 * → Observing"), the first of their kinds names the commit, and each step is a line of the last
 * paragraph ("migration m/b1: Syncing → Observing").
 */
export function headedBySteps(message: StatusMessage, steps: readonly StatusEvent[]): StatusMessage {
  const first = steps[0];
  if (!first) return message;
  const kinds = [...new Set(steps.map((step) => step.kind))];
  const parts = kinds.map(
    (kind) =>
      `${kind}: ${steps
        .filter((step) => step.kind === kind)
        .map((step) => step.line)
        .join("; ")}`,
  );
  return carrying(
    { ...message, head: { kind: first.kind, line: `${message.head.line}; ${parts.join("; ")}` } },
    steps.map((step) => ({ kind: step.kind, line: `${step.kind} ${step.line}` })),
  );
}
