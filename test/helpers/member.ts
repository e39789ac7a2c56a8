import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { memberClientConfig, simulatedKubeconfig } from "../../src/sim/kubeconfig.js";
import type { SimulatedMember } from "../../src/sim/member-server.js";

/** A client-node configuration for one simulated member (the product's own kubeconfig for it). */
export const clientConfig = (member: SimulatedMember) => memberClientConfig(member);

/** Writes the kubeconfig gitfleet writes for simulated members (a context per member) to `path`. */
export function writeKubeconfig(
  path: string,
  members: readonly Pick<SimulatedMember, "name" | "url">[],
): string {
  writeFileSync(path, simulatedKubeconfig(members));
  return path;
}

/**
 * Runs kubectl with a kubeconfig. Asynchronous on purpose: a member started by the test answers from
 * this very process, which a synchronous spawn would block.
 */
export function kubectl(
  kubeconfig: string,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(
      "kubectl",
      ["--kubeconfig", kubeconfig, ...args],
      { encoding: "utf8", timeout: 30_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

/** Polls until `probe` gives a value (every 25 ms, for at most `timeoutMs`). */
export async function until<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 5000,
): Promise<T> {
  for (let i = 0; i < timeoutMs / 25; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error("timed out waiting for the condition");
}
