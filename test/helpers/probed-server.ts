import { get } from "node:http";
import { createLogger } from "../../src/log/logger.js";
import { type ControllerServer, startControllerServer } from "../../src/server/http-server.js";

/** The controller's HTTP endpoint alone (no API, no webhook), on loopback, for probing it. */
export function startProbedServer(allowedHosts?: readonly string[]): Promise<ControllerServer> {
  return startControllerServer({
    listen: "127.0.0.1:0",
    webhookSecret: undefined,
    sourceBranch: "main",
    trigger: () => undefined,
    ready: () => true,
    logger: createLogger({ level: "silent" }),
    ...(allowedHosts ? { allowedHosts } : {}),
  });
}

/** GET `path` with a Host header, as a probe or a browser would: the status, or 0 without an answer in time. */
export function statusOf(url: string, host?: string, timeoutMs = 1000): Promise<number> {
  return new Promise((resolve) => {
    const request = get(url, { timeout: timeoutMs, ...(host ? { headers: { host } } : {}) }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on("timeout", () => request.destroy());
    request.on("error", () => resolve(0));
  });
}

/**
 * Runs `work` while probing the endpoint's /healthz every 20 ms, as a kubelet would (each probe with
 * a 500 ms deadline): the work's result, and every probe's status.
 */
export async function probedWhile<T>(
  server: ControllerServer,
  work: Promise<T>,
): Promise<{ result: T; answered: number[] }> {
  let running = true;
  const answered: number[] = [];
  const probes = (async () => {
    while (running) {
      answered.push(await statusOf(`${server.url}/healthz`, undefined, 500));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  try {
    return { result: await work, answered };
  } finally {
    running = false;
    await probes;
  }
}
