import { randomBytes } from "node:crypto";
import { asMap } from "../../apimachinery/json.js";
import { StatusError } from "../status-error.js";
import type { ApiContext, ApiRequest, ApiResponse, Target } from "./api-context.js";
import { existing, keyOf } from "./objects.js";

/**
 * `serviceaccounts/token` (`kubectl create token`): a TokenRequest answered with a token for the
 * ServiceAccount and its expiry (the asked expirationSeconds, an hour by default). Shaped as the API
 * server's — a JWT whose claims name the account and its expiry (`exp`), so a client can tell when it
 * ends — but unsigned (`alg: none`, a visibly simulated signature): a simulated member authenticates
 * nobody, and the token is good for nothing else.
 */
export function tokenAnswer(api: ApiContext, request: ApiRequest, target: Target): ApiResponse {
  if (request.method !== "POST")
    throw new StatusError(
      405,
      "MethodNotAllowed",
      "the server does not allow this method on the requested resource",
    );
  existing(api, keyOf(target));
  const spec = asMap(asMap(request.body).spec);
  const seconds = typeof spec.expirationSeconds === "number" ? spec.expirationSeconds : 3600;
  const issued = Math.floor(api.now().getTime() / 1000);
  const expires = new Date((issued + seconds) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const token = [
    part({ alg: "none", typ: "JWT" }),
    part({
      iss: "gitfleet-simulated-member",
      sub: `system:serviceaccount:${target.namespace ?? ""}:${target.name ?? ""}`,
      iat: issued,
      exp: issued + seconds,
    }),
    `simulated-${randomBytes(8).toString("hex")}`,
  ].join(".");
  return {
    status: 201,
    body: {
      kind: "TokenRequest",
      apiVersion: "authentication.k8s.io/v1",
      metadata: { name: target.name ?? "", namespace: target.namespace ?? "", creationTimestamp: null },
      spec: { ...spec, expirationSeconds: seconds },
      status: {
        token,
        expirationTimestamp: expires,
      },
    },
  };
}
