/** How often members are synced again without a new commit, unless fleet.yaml's driftInterval says. */
export const DEFAULT_DRIFT_INTERVAL_MS = 5 * 60_000;
