import { stringify } from "yaml";

/** Where a command writes: stdout for results, stderr for diagnostics. Injected so tests can capture. */
export interface CommandOutput {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

/** A result as a machine reads it: JSON (2-space indented) or YAML, each ending in a newline. */
export function structured(value: unknown, format: "json" | "yaml"): string {
  return format === "json" ? `${JSON.stringify(value, null, 2)}\n` : stringify(value, { lineWidth: 0 });
}

/** The process's real stdout and stderr. */
export const processOutput: CommandOutput = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};
