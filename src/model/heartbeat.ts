// Liveness of pull-mode members: their agents beat, the controller judges the silence.

/** How often a pull-mode agent beats (30 s). */
export const AGENT_HEARTBEAT_INTERVAL_MS = 30_000;

/** A heartbeat older than two intervals counts as a failed probe of the agent's cluster. */
export const HEARTBEAT_STALE_MS = 2 * AGENT_HEARTBEAT_INTERVAL_MS;

/** A heartbeat as the controller sees it: the commit the agent's ref points at, and the time it claims. */
export interface Heartbeat {
  readonly tip: string;
  /** The commit's committer date (ms): the agent's own clock, used only until the controller sees a beat itself. */
  readonly claimedAt: number;
}
