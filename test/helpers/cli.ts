import { execFile, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const BIN = fileURLToPath(new URL("../../bin/gitfleet.js", import.meta.url));

/** What one `gitfleet …` process did. */
export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** How a `gitfleet …` process runs: its working directory, extra environment, and deadline. */
export interface CliOptions {
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
}

/** Runs `gitfleet ARGS` as a real process (the built bin) and waits for it. */
export function gitfleetCli(args: readonly string[], options: CliOptions = {}): CliResult {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    encoding: "utf8",
    ...(options.cwd ? { cwd: options.cwd } : {}),
    env: { ...process.env, ...options.env },
    timeout: options.timeoutMs ?? 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * Runs `gitfleet ARGS` without blocking this process: for tests whose simulated members answer from
 * this very process, which a synchronous spawn would freeze.
 */
export function gitfleetAsync(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      [BIN, ...args],
      {
        encoding: "utf8",
        ...(options.cwd ? { cwd: options.cwd } : {}),
        env: { ...process.env, ...options.env },
        timeout: options.timeoutMs ?? 120_000,
      },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}
