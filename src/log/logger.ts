import { type DestinationStream, type Logger, pino } from "pino";

/**
 * Field names whose values are never logged, at any depth and in any letter case: Secret values,
 * tokens, passwords, authorization headers, webhook signatures and kubeconfig contents.
 */
export const REDACTED_KEYS: ReadonlySet<string> = new Set([
  "token",
  "password",
  "authorization",
  "kubeconfig",
  "data",
  "stringdata",
  "secret",
  "x-hub-signature-256",
  "x-gitlab-token",
  "x-gitea-signature",
]);

const CENSOR = "[redacted]";
const MAX_DEPTH = 10;

/** Options for the process logger; defaults: level info, JSON lines to stderr. */
export interface LoggerOptions {
  readonly level?: string;
  /** Where records go. Default: stderr, so stdout stays clean for command output. */
  readonly destination?: DestinationStream;
}

/** Creates the structured logger used by every edge: pino, JSON lines, secrets redacted. */
export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? "info",
      base: { name: "gitfleet" },
      formatters: { log: (record) => redact(record, 0, new WeakSet()) as Record<string, unknown> },
    },
    options.destination ?? pino.destination(2),
  );
}

/** A copy of a log record with every sensitive field's value replaced, however deeply nested. */
export function redact(value: unknown, depth: number, seen: WeakSet<object>): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (depth >= MAX_DEPTH || seen.has(value)) return "[truncated]";
  seen.add(value);
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1, seen));
  if (value instanceof Error) return { type: value.name, message: value.message };
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    out[key] = REDACTED_KEYS.has(key.toLowerCase()) ? CENSOR : redact(child, depth + 1, seen);
  }
  return out;
}
