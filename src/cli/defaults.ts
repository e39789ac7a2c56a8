// Defaults the commands' help texts name and their actions apply.

export const DEFAULT_AUTHOR = { name: "gitfleet", email: "gitfleet@localhost" };

export { DEFAULT_DRIFT_INTERVAL_MS } from "../model/fleet-defaults.js";

export const DEFAULT_INTERVAL_MS = 3 * 60_000;

export const DEFAULT_STATUS_BRANCH = "gitfleet/status";

/** How often a standby brings its state up to the status branch's tip (--standby-follow-interval). */
export const DEFAULT_FOLLOW_INTERVAL = "10s";
