/** Where a command writes: stdout for results, stderr for diagnostics. Injected so tests can capture. */
export interface CommandOutput {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

/** The process's real stdout and stderr. */
export const processOutput: CommandOutput = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};
