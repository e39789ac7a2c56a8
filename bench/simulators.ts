import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse, stringify } from "yaml";

const BIN = fileURLToPath(new URL("../../bin/gitfleet.js", import.meta.url));

/** A `gitfleet simulate` process serving some members, and the kubeconfig it wrote for them. */
export interface Simulator {
  readonly child: ChildProcess;
  readonly kubeconfig: string;
}

/**
 * Starts `gitfleet simulate` for `members` of the fleet at `fleet`, with the simulator profile at
 * `profile`, its kubeconfig written to `out`; resolves once the kubeconfig is there.
 * BENCH_SIMULATOR_PROFILE=dir writes a CPU profile of the process there.
 */
export async function startSimulator(options: {
  readonly fleet: string;
  readonly members: readonly string[];
  readonly out: string;
  readonly profile: string;
}): Promise<Simulator> {
  const child = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_SIMULATOR_PROFILE
        ? ["--cpu-prof", "--cpu-prof-dir", process.env.BENCH_SIMULATOR_PROFILE]
        : []),
      BIN,
      "simulate",
      "--from-repo",
      options.fleet,
      ...options.members.flatMap((member) => ["--cluster", member]),
      "--kubeconfig-out",
      options.out,
      "--profile",
      options.profile,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  await new Promise<void>((resolve, reject) => {
    let printed = "";
    child.on("exit", (code) => reject(new Error(`gitfleet simulate exited with ${String(code)}`)));
    child.stdout?.on("data", (chunk: Buffer) => {
      printed += chunk.toString();
      if (printed.includes("kubeconfig:")) resolve();
    });
  });
  return { child, kubeconfig: options.out };
}

/** Stops simulators started by startSimulator. */
export function stopSimulators(simulators: readonly Simulator[]): void {
  for (const { child } of simulators) {
    child.removeAllListeners("exit");
    child.kill("SIGTERM");
  }
}

/** One kubeconfig with every process's clusters, contexts and users. */
export function mergedKubeconfig(files: readonly string[]): string {
  const configs = files.map((file) => parse(readFileSync(file, "utf8")) as Record<string, unknown[]>);
  const all = (key: string) => configs.flatMap((c) => c[key] ?? []);
  const first = configs[0] ?? {};
  return stringify({ ...first, clusters: all("clusters"), contexts: all("contexts"), users: all("users") });
}
