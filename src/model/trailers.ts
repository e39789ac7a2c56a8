/** The trailer naming the source commit a status commit reconciled. */
export const SOURCE_COMMIT_TRAILER = "Source-Commit";
/** The trailer naming the controller that wrote a status commit. */
export const CONTROLLER_TRAILER = "Gitfleet-Controller";

/** The trailer naming what a status commit recorded (an EventKind), beside the subject people read. */
export const EVENT_TRAILER = "Gitfleet-Event";

/** What a status commit recorded. */
export const EVENT_KINDS = [
  "reconcile",
  "invalid",
  "failover",
  "scale",
  "rollout",
  "migration",
  "upgrade",
  "restore",
  "sync",
  "agent",
  "shard",
] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

/** The event a message's Gitfleet-Event trailer names; undefined when it names none gitfleet knows. */
export function eventTrailer(message: string): EventKind | undefined {
  const value = trailerBlock(message)?.get(EVENT_TRAILER);
  return EVENT_KINDS.find((kind) => kind === value);
}

const TRAILER = /^([A-Z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+): (.*)$/;

/**
 * A commit message's trailers, as `git interpret-trailers` reads them: the last paragraph, when
 * every line of it is `Key-Word: value` (capitalised and hyphenated, as Source-Commit or
 * Signed-off-by, so a body line such as "east: 0 applied" is not one); undefined when there is none. Trailer-like lines anywhere else —
 * a body quoting another commit — are not trailers.
 */
export function trailerBlock(message: string): Map<string, string> | undefined {
  const paragraphs = message.replace(/\s+$/, "").split(/\n[ \t]*\n/);
  if (paragraphs.length < 2) return undefined;
  const last = (paragraphs.at(-1) ?? "").split("\n");
  const trailers = new Map<string, string>();
  for (const line of last) {
    const match = TRAILER.exec(line);
    if (!match) return undefined;
    trailers.set(match[1] as string, match[2] as string);
  }
  return trailers;
}

/** True when a message ends in the trailer block gitfleet writes on status commits. */
export function hasStatusTrailers(message: string): boolean {
  const trailers = trailerBlock(message);
  return (
    /^[0-9a-f]{40}$/.test(trailers?.get(SOURCE_COMMIT_TRAILER) ?? "") &&
    (trailers?.get(CONTROLLER_TRAILER) ?? "") !== ""
  );
}
