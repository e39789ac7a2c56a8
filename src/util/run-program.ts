import { spawn } from "node:child_process";

/** What a program run did: its exit code and what it printed (bounded). */
export interface ProgramResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
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
): Promise<ProgramResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ["pipe", "pipe", "pipe"], env: ownEnvironment() });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      if (stdout.length < MAX_OUTPUT) stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < MAX_OUTPUT) stderr += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
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
