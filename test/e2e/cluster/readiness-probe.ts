import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import type { JsonMap } from "../../../src/apimachinery/json.js";

/**
 * A readiness probe's httpGet on the pod's address (127.0.0.1 on the host network): ready on a 2xx
 * or 3xx within 2 s; HTTPS without verifying, as the kubelet probes.
 */
export function httpProbe(host: string, get: JsonMap): Promise<boolean> {
  return new Promise((resolve) => {
    const https = String(get.scheme ?? "HTTP") === "HTTPS";
    const request = (https ? httpsRequest : httpRequest)(
      {
        host,
        port: Number(get.port),
        path: String(get.path ?? "/"),
        method: "GET",
        timeout: 2000,
        ...(https ? { rejectUnauthorized: false } : {}),
      },
      (response) => {
        response.resume();
        resolve((response.statusCode ?? 500) >= 200 && (response.statusCode ?? 500) < 400);
      },
    );
    request.on("error", () => resolve(false));
    request.on("timeout", () => {
      request.destroy();
      resolve(false);
    });
    request.end();
  });
}
