/** "3m ago", "2h ago", "5d ago" from an ISO time. */
export function ago(iso: string | undefined, now = Date.now()): string {
  if (!iso) return "";
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds}s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)}h ago`;
  return `${Math.floor(seconds / 86400)}d ago`;
}

export function short(commit: string | null | undefined): string {
  return commit ? commit.slice(0, 7) : "—";
}

/** "1 app", "3 apps". */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

export { amount } from "../../src/observe/format-status.js";
