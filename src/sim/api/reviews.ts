import { asMap, type JsonMap } from "../../apimachinery/json.js";
import type { ApiResource } from "../api-resources.js";
import { StatusError } from "../status-error.js";
import type { ApiRequest, ApiResponse, Target } from "./api-context.js";

/**
 * The review kinds a client creates to ask the server something, never stored: whether it may do
 * something (SelfSubjectAccessReview — `kubectl auth can-i`), what it may do (SelfSubjectRulesReview —
 * `kubectl auth can-i --list`), who it is (SelfSubjectReview — `kubectl auth whoami`). A simulated
 * member has no authentication or authorization: every client is an administrator and every request
 * is allowed, which is what these answers say.
 */
export const REVIEW_RESOURCES: readonly ApiResource[] = [
  review("authorization.k8s.io", "SelfSubjectAccessReview"),
  review("authorization.k8s.io", "SelfSubjectRulesReview"),
  review("authentication.k8s.io", "SelfSubjectReview"),
];

function review(group: string, kind: string): ApiResource {
  return {
    group,
    version: "v1",
    name: `${kind.toLowerCase()}s`,
    singularName: kind.toLowerCase(),
    kind,
    namespaced: false,
    verbs: ["create"],
  };
}

const ADMIN = { username: "system:admin", groups: ["system:masters", "system:authenticated"] };

/** The answer to creating a review: the request with its status filled in (201). */
export function reviewAnswer(request: ApiRequest, target: Target): ApiResponse {
  if (request.method !== "POST")
    throw new StatusError(
      405,
      "MethodNotAllowed",
      `the server does not allow this method on the requested resource`,
    );
  const body = asMap(request.body);
  const { group, version, kind } = target.resource;
  const answered: JsonMap = {
    kind,
    apiVersion: `${group}/${version}`,
    metadata: { creationTimestamp: null },
    spec: asMap(body.spec),
    status: statusOf(kind),
  };
  if (kind === "SelfSubjectReview") delete answered.spec;
  return { status: 201, body: answered };
}

function statusOf(kind: string): JsonMap {
  if (kind === "SelfSubjectAccessReview") return { allowed: true };
  if (kind === "SelfSubjectReview") return { userInfo: ADMIN };
  return {
    resourceRules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }],
    nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }],
    incomplete: false,
  };
}
