import { CronExpressionParser } from "cron-parser";
import { parseDuration } from "../model/duration.js";
import type { SyncWindowSpec } from "../model/types.js";

/**
 * fleet.yaml's sync windows, read as Argo CD reads its own: a deny window that is open holds the
 * apps and clusters it names (deny wins); when allow windows name an app in a cluster, changes reach
 * it only while one of them is open; with no window naming it, it is always open. A change that only
 * moves replicas for failover passes every window that does not say blockFailover. Pure: `now` is
 * given.
 */

/** Whether a change of `app` may reach `cluster` at `now`, and if not, which window says so and when that ends. */
export type WindowVerdict =
  | { readonly open: true }
  | {
      readonly open: false;
      /** "deny window business-hours is open until 2026-12-03T18:00:00.000Z". */
      readonly reason: string;
      readonly window: string;
      /** When changes may go through again (undefined: not within the next 400 days). */
      readonly opensAt?: number;
    };

/** What the window is called in status and plan: its name, else its kind and position (deny-0). */
export function windowName(window: SyncWindowSpec, index: number): string {
  return window.name ?? `${window.kind}-${index}`;
}

// The last answer per window: a sync asks about every app of every cluster at the same moment.
const lastAsked = new WeakMap<
  SyncWindowSpec,
  { at: number; opening: { start: number; end: number } | undefined }
>();

/** The window's last start at or before `at`, and its end; undefined when it cannot be read. */
function lastOpening(window: SyncWindowSpec, at: number): { start: number; end: number } | undefined {
  const asked = lastAsked.get(window);
  if (asked?.at === at) return asked.opening;
  const opening = computeLastOpening(window, at);
  lastAsked.set(window, { at, opening });
  return opening;
}

function computeLastOpening(window: SyncWindowSpec, at: number): { start: number; end: number } | undefined {
  const duration = parseDuration(window.duration);
  if (duration === undefined) return undefined;
  try {
    const tz = window.timeZone ?? "UTC";
    const start = CronExpressionParser.parse(window.schedule, { currentDate: at + 1, tz })
      .prev()
      .getTime();
    return { start, end: start + duration };
  } catch {
    return undefined;
  }
}

// The window's next start after `at`.
function nextOpening(window: SyncWindowSpec, at: number): number | undefined {
  try {
    const tz = window.timeZone ?? "UTC";
    return CronExpressionParser.parse(window.schedule, { currentDate: at, tz }).next().getTime();
  } catch {
    return undefined;
  }
}

/** True when the window is open at `at`. */
export function windowOpen(window: SyncWindowSpec, at: number): boolean {
  const opening = lastOpening(window, at);
  return opening !== undefined && at < opening.end;
}

function matches(patterns: readonly string[] | undefined, name: string): boolean {
  if (patterns === undefined || patterns.length === 0) return true;
  return patterns.some((pattern) =>
    new RegExp(`^${pattern.split("*").map(escapeRegExp).join(".*")}$`).test(name),
  );
}

const escapeRegExp = (text: string) => text.replace(/[.+?^${}()|[\]\\]/g, "\\$&");

/** The windows of the fleet that apply to the app in the cluster, with their names. */
export function windowsFor(
  windows: readonly SyncWindowSpec[],
  app: string,
  cluster: string,
  failover: boolean,
): { window: SyncWindowSpec; name: string }[] {
  return windows
    .map((window, i) => ({ window, name: windowName(window, i) }))
    .filter(({ window }) => matches(window.apps, app) && matches(window.clusters, cluster))
    .filter(({ window }) => !failover || window.blockFailover === true);
}

// Closed at `at` by the given windows: the deny window open, or the allow windows all closed.
function closedBy(
  applying: readonly { window: SyncWindowSpec; name: string }[],
  at: number,
): { name: string; reason: string } | undefined {
  const deny = applying.find(({ window }) => window.kind === "deny" && windowOpen(window, at));
  if (deny) {
    const end = lastOpening(deny.window, at)?.end ?? at;
    return {
      name: deny.name,
      reason: `deny window ${deny.name} is open until ${new Date(end).toISOString()}`,
    };
  }
  const allows = applying.filter(({ window }) => window.kind === "allow");
  if (allows.length === 0 || allows.some(({ window }) => windowOpen(window, at))) return undefined;
  return {
    name: allows.map((a) => a.name).join(", "),
    reason: `outside allow window${allows.length > 1 ? "s" : ""} ${allows.map((a) => a.name).join(", ")}`,
  };
}

/**
 * Whether a change of `app` may reach `cluster` at `now`; `failover` when it only moves replicas for
 * failover (windows without blockFailover let it through).
 */
export function windowVerdict(
  windows: readonly SyncWindowSpec[] | undefined,
  app: string,
  cluster: string,
  now: number,
  failover = false,
): WindowVerdict {
  const applying = windowsFor(windows ?? [], app, cluster, failover);
  const closed = closedBy(applying, now);
  if (!closed) return { open: true };
  const opensAt = nextOpen(applying, now);
  return {
    open: false,
    window: closed.name,
    reason: closed.reason,
    ...(opensAt === undefined ? {} : { opensAt }),
  };
}

const HORIZON_MS = 400 * 24 * 3_600_000;

// The first moment after `now` at which the windows let changes through: the candidates are the
// ends of open deny windows and the starts of allow windows, tried in time order.
function nextOpen(
  applying: readonly { window: SyncWindowSpec; name: string }[],
  now: number,
): number | undefined {
  let at = now;
  for (let step = 0; step < 200 && at < now + HORIZON_MS; step++) {
    const later = applying.flatMap(({ window }) => changeAfter(window, at));
    if (later.length === 0) return undefined;
    at = Math.min(...later);
    if (!closedBy(applying, at)) return at;
  }
  return undefined;
}

// When the window next changes what it allows after `at`: an open deny window's end, an allow window's next start.
function changeAfter(window: SyncWindowSpec, at: number): number[] {
  if (window.kind === "deny") {
    const opening = lastOpening(window, at);
    return opening && at < opening.end ? [opening.end] : [];
  }
  const next = nextOpening(window, at);
  return next !== undefined && next > at ? [next] : [];
}
