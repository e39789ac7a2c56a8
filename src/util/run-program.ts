import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

/** What a program run did: its exit code and what it printed (bounded). */
export interface ProgramResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** It printed more than the bound (and was stopped), or ran past its timeout (and was killed). */
  readonly truncated?: boolean;
  readonly timedOut?: boolean;
  /**
   * It hit a bound it ran under: its memory (an allocation failed), its CPU time (SIGXCPU), or it was
   * killed by someone else (past its CPU time's hard limit, or by the system for memory).
   */
  readonly limit?: "memory" | "cpu" | "killed";
}

/** How a run is bounded, and its environment when it is not this process's own. */
export interface ProgramOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly timeoutMs?: number;
  /** Characters of stdout and of stderr kept; a program that prints more is stopped. */
  readonly maxOutput?: number;
  /** The memory it may allocate (its data segment, RLIMIT_DATA), in bytes; default 1 GiB. */
  readonly memoryBytes?: number;
  /** The CPU time it may use, in seconds; default the timeout's, else 300. */
  readonly cpuSeconds?: number;
}

const MAX_OUTPUT = 1 << 20;
/** The memory a child may allocate unless its caller says otherwise. */
export const DEFAULT_CHILD_MEMORY_BYTES = 2 ** 30;
const DEFAULT_CPU_SECONDS = 300;
/** Children at once, whoever starts them: the rest wait their turn. */
export const MAX_CHILDREN = 4;

/**
 * Runs a program gitfleet relies on (helm, git, ssh-keygen, gpg) with `input` on stdin, bounded: its
 * output and time, its memory and CPU time (prlimit's RLIMIT_DATA and RLIMIT_CPU, where util-linux's
 * prlimit is installed), and at most MAX_CHILDREN at once in this process. Its environment is a copy
 * of this process's own variables on an object without a prototype — never anything a polluted
 * Object.prototype could add (BASH_ENV, NODE_OPTIONS) — unless the caller gives one.
 */
export async function runProgram(
  program: string,
  args: readonly string[],
  input: string | Uint8Array,
  options: ProgramOptions = {},
): Promise<ProgramResult> {
  await slots.acquire();
  try {
    return await runBounded(program, args, input, options);
  } finally {
    slots.release();
  }
}

function runBounded(
  program: string,
  args: readonly string[],
  input: string | Uint8Array,
  options: ProgramOptions,
): Promise<ProgramResult> {
  const max = options.maxOutput ?? MAX_OUTPUT;
  const [command, commandArgs] = bounded(program, args, options);
  return new Promise((resolve, reject) => {
    const env = options.env ?? ownEnvironment();
    const child = spawn(command, commandArgs, { stdio: ["pipe", "pipe", "pipe"], env });
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
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const limit = truncated || timedOut ? undefined : limitHit(signal, stderr);
      resolve({
        code,
        stdout,
        stderr,
        ...(truncated ? { truncated } : {}),
        ...(timedOut ? { timedOut } : {}),
        ...(limit ? { limit } : {}),
      });
    });
    child.stdin.on("error", () => undefined);
    child.stdin.end(input);
  });
}

// The command that runs the program under its bounds: prlimit around it, where there is one. The CPU
// bound's hard limit is a second past the soft one: programs that ignore SIGXCPU (Go's do) are killed.
function bounded(program: string, args: readonly string[], options: ProgramOptions): [string, string[]] {
  const prlimit = prlimitBinary();
  if (!prlimit) return [program, [...args]];
  const memory = Math.max(1, Math.floor(options.memoryBytes ?? DEFAULT_CHILD_MEMORY_BYTES));
  const cpu = Math.max(
    1,
    Math.ceil(
      options.cpuSeconds ??
        (options.timeoutMs !== undefined ? options.timeoutMs / 1000 : DEFAULT_CPU_SECONDS),
    ),
  );
  return [prlimit, [`--data=${memory}`, `--cpu=${cpu}:${cpu + 1}`, "--", program, ...args]];
}

// Which bound a run that failed hit: the CPU bound ends it by SIGXCPU or (past the hard limit) SIGKILL;
// the memory bound makes allocations fail, which programs report as running out of memory.
function limitHit(signal: NodeJS.Signals | null, stderr: string): ProgramResult["limit"] {
  if (signal === "SIGXCPU") return "cpu";
  if (signal === "SIGKILL") return "killed";
  if (/out of memory|cannot allocate memory|malloc failed|bad_alloc|MemoryError/i.test(stderr))
    return "memory";
  return undefined;
}

let prlimitPath: string | null | undefined;

// util-linux's prlimit, found once: on the PATH, else where Debian puts it.
function prlimitBinary(): string | undefined {
  if (prlimitPath === undefined) {
    const candidates = [
      ...(process.env.PATH ?? "")
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, "prlimit")),
      "/usr/bin/prlimit",
      "/bin/prlimit",
    ];
    prlimitPath = process.platform === "linux" ? (candidates.find(isExecutable) ?? null) : null;
  }
  return prlimitPath ?? undefined;
}

/** Whether a file exists and this process may execute it. */
export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Whether children run under memory and CPU bounds here (util-linux's prlimit on Linux). */
export function childrenBounded(): boolean {
  return prlimitBinary() !== undefined;
}

// A counting semaphore: at most MAX_CHILDREN runs hold a slot; the others wait in order.
const slots = (() => {
  let free = MAX_CHILDREN;
  const waiting: (() => void)[] = [];
  return {
    acquire: (): Promise<void> => {
      if (free > 0) {
        free--;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
    release: (): void => {
      const next = waiting.shift();
      if (next) next();
      else free++;
    },
  };
})();

/** This process's environment as own properties of a prototype-less object. */
export function ownEnvironment(): NodeJS.ProcessEnv {
  const env = Object.create(null) as NodeJS.ProcessEnv;
  for (const key of Object.keys(process.env)) env[key] = process.env[key];
  return env;
}
