import { randomBytes } from "node:crypto";
import { asMap } from "../../apimachinery/json.js";
import { StatusError } from "../status-error.js";
import type { ApiContext, ApiRequest, ApiResponse, Target } from "./api-context.js";
import { existing, keyOf } from "./objects.js";

/**
 * `serviceaccounts/token` (`kubectl create token`): a TokenRequest answered with a token for the
 * ServiceAccount and its expiry (the asked expirationSeconds, an hour by default). A simulated member
 * authenticates nobody, so the token is an opaque, visibly simulated string, good for nothing.
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
  const expires = new Date(api.now().getTime() + seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
  return {
    status: 201,
    body: {
      kind: "TokenRequest",
      apiVersion: "authentication.k8s.io/v1",
      metadata: { name: target.name ?? "", namespace: target.namespace ?? "", creationTimestamp: null },
      spec: { ...spec, expirationSeconds: seconds },
      status: {
        token: `gitfleet-simulated-token.${target.namespace ?? ""}.${target.name ?? ""}.${randomBytes(8).toString("hex")}`,
        expirationTimestamp: expires,
      },
    },
  };
}
