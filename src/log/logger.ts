import { type DestinationStream, type Logger, pino } from "pino";

/**
 * Field paths whose values are never logged. Secret values, tokens and kubeconfig contents are
 * replaced with "[redacted]" wherever they appear in a log record.
 */
export const REDACTED_PATHS: readonly string[] = [
  "token",
  "*.token",
  "password",
  "*.password",
  "authorization",
  "*.authorization",
  "headers.authorization",
  "*.headers.authorization",
  "kubeconfig",
  "*.kubeconfig",
  "data",
  "*.data",
  "stringData",
  "*.stringData",
  "secret",
  "*.secret",
];

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
      redact: { paths: [...REDACTED_PATHS], censor: "[redacted]" },
    },
    options.destination ?? pino.destination(2),
  );
}
