import { spawn } from "node:child_process";

/** What a program run did: its exit code and what it printed (bounded). */
export interface ProgramResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** It printed more than the bound (and was stopped), or ran past its timeout (and was killed). */
  readonly truncated?: boolean;
  readonly timedOut?: boolean;
}

/** How a run is bounded, and its environment when it is not this process's own. */
export interface ProgramOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly timeoutMs?: number;
  /** Characters of stdout and of stderr kept; a program that prints more is stopped. */
  readonly maxOutput?: number;
}

const MAX_OUTPUT = 1 << 20;

/**
 * Runs a program gitfleet relies on (ssh-keygen, gpg, gpgv) with `input` on stdin. Its environment is
 * a copy of this process's own variables on an object without a prototype — never anything a
 * polluted Object.prototype could add (BASH_ENV, NODE_OPTIONS) — and its output is bounded.
 */
export function runProgram(
  program: string,
  args: readonly string[],
  input: string | Uint8Array,
  options: ProgramOptions = {},
): Promise<ProgramResult> {
  const max = options.maxOutput ?? MAX_OUTPUT;
  return new Promise((resolve, reject) => {
    const env = options.env ?? ownEnvironment();
    const child = spawn(program, args, { stdio: ["pipe", "pipe", "pipe"], env });
    let stdout = "";
    let stderr = "";
    let truncated = false;
    let timedOut = false;
    const keep = (kept: string, chunk: Buffer): string => {
      if (kept.length + chunk.length <= max) return kept + chunk.toString();
      truncated = true;
      child.kill("SIGKILL");
      return kept;
    };
    child.stdout.on("data", (chunk: Buffer) => {
      stdout = keep(stdout, chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = keep(stderr, chunk);
    });
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            child.kill("SIGKILL");
          }, options.timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({
        code,
        stdout,
        stderr,
        ...(truncated ? { truncated } : {}),
        ...(timedOut ? { timedOut } : {}),
      });
    });
    child.stdin.on("error", () => undefined);
    child.stdin.end(input);
  });
}

/** This process's environment as own properties of a prototype-less object. */
export function ownEnvironment(): NodeJS.ProcessEnv {
  const env = Object.create(null) as NodeJS.ProcessEnv;
  for (const key of Object.keys(process.env)) env[key] = process.env[key];
  return env;
}
