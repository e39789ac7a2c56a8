import { execFile, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import type { JsonMap } from "../../src/apimachinery/json.js";
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

/**
 * A long-running kubectl (`get -w`, `logs -f`) whose output is read as it comes: the test waits for
 * what it expects to appear, never for a fixed time, then stops it.
 */
export function kubectlStream(kubeconfig: string, ...args: string[]) {
  const child = spawn("kubectl", ["--kubeconfig", kubeconfig, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    output += chunk;
  });
  const closed = new Promise<{ code: number | null; output: string }>((resolve) =>
    child.on("close", (code) => resolve({ code, output })),
  );
  return {
    output: () => output,
    /** Resolves when kubectl ends by itself (a followed pod deleted), with its exit code and output. */
    closed: () => closed,
    /** Waits until the output holds `text` (at most `timeoutMs`), and returns the output so far. */
    seen: (text: string, timeoutMs = 10_000) =>
      until(() => (output.includes(text) ? output : undefined), timeoutMs),
    stop: async () => {
      child.kill();
      return (await closed).output;
    },
  };
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

/**
 * One request to a simulated member over HTTP, as a client sends it: the body is sent as given when a
 * string (YAML, a patch), as JSON otherwise. Returns the status, the Warning header and the decoded body.
 */
export async function memberRequest(
  url: string,
  method: string,
  path: string,
  body?: unknown,
  contentType = "application/json",
): Promise<{ status: number; warning: string | null; body: JsonMap }> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { "content-type": contentType },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
  return {
    status: response.status,
    warning: response.headers.get("warning"),
    body: (await response.json()) as JsonMap,
  };
}
