import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const BIN = fileURLToPath(new URL("../../bin/gitfleet.js", import.meta.url));

/** `gitfleet run` as a real process, its JSON log records collected as they come. */
export interface GitfleetRun {
  readonly child: ChildProcess;
  /** http://host:port, from its "listening" record. */
  readonly url: string;
  readonly records: Record<string, unknown>[];
}

/** Spawns `gitfleet run ARGS` and resolves once it listens (rejects if it exits first). */
export function spawnRun(
  args: readonly string[],
  env: Readonly<Record<string, string>>,
): Promise<GitfleetRun> {
  const child = spawn(process.execPath, [BIN, "run", ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const records: Record<string, unknown>[] = [];
  let buffer = "";
  return new Promise((resolve, reject) => {
    child.on("exit", (code) => reject(new Error(`gitfleet run exited early with ${code}`)));
    child.stderr?.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split("\n");
      buffer = lines.pop() ?? "";
      for (const line of lines) {
        const record = JSON.parse(line) as Record<string, unknown>;
        records.push(record);
        if (record.msg === "listening") resolve({ child, url: String(record.url), records });
      }
    });
  });
}
