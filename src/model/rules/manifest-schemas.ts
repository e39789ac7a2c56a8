import type { JsonMap } from "../../apimachinery/json.js";
import {
  DEFAULT_KUBERNETES_MINOR,
  isBuiltInGroup,
  releaseOf,
} from "../../apimachinery/openapi/kubernetes-schemas.js";
import { type CrdSchemas, crdSchemas, objectViolations } from "../../apimachinery/openapi/object-schemas.js";
import type { Violation } from "../../apimachinery/openapi/validate-object.js";
import { withValuesEmpty } from "../sops-secret.js";
import type { Resource } from "../types.js";
import { RememberedFindings } from "./remembered-findings.js";
import type { RuleContext } from "./rule.js";

const NAMED = /^[A-Z][A-Za-z0-9]*$/;
const VERSION = /^v\d+(?:(?:alpha|beta)\d+)?$/;

/**
 * Every manifest against the OpenAPI schema of the Kubernetes version the fleet declares
 * (fleet.yaml spec.kubernetesVersion, default the newest supported), and every custom resource
 * against the openAPIV3Schema of its CRD in the repo: what the API server would refuse is an error
 * at the file, line and column of the field, before merge.
 */
export function checkManifestSchemas(context: RuleContext): void {
  const minor = context.model.fleet?.spec.kubernetesVersion ?? DEFAULT_KUBERNETES_MINOR;
  // A place another check already found wrong (an invalid label, a kind that is no name) is said once.
  const before = context.reporter.problems.length;
  const reported = new Set(context.reporter.problems.map(placeOf));
  const crds = crdSchemas(context.model.apps.flatMap((app) => app.resources));
  for (const resource of context.model.apps.flatMap((app) => app.resources)) {
    // A kind or version that is no name at all is another check's to report.
    if (!NAMED.test(resource.kind) || !VERSION.test(resource.apiVersion.split("/").pop() ?? "")) continue;
    // What it is checked against besides itself: the minor, and its CRD's schema (the same object
    // while the CRD's file is unchanged).
    const crd = crds.get(`${resource.apiVersion}/${resource.kind}`);
    remembered.check(context, resource, (own) => checkSchema(own, minor, crds, resource), [minor, crd]);
  }
  const fresh = context.reporter.problems.splice(before);
  context.reporter.problems.push(...fresh.filter((p) => !reported.has(placeOf(p))));
}

// A load reuses the resources of the files that did not change: a one-app change checks that app's.
const remembered = new RememberedFindings("manifest-schemas");

function checkSchema(context: RuleContext, minor: string, crds: CrdSchemas, resource: Resource): void {
  // A sealed Secret's values are ciphertexts: its schema is checked with each value empty.
  const object = resource.sealed ? withValuesEmpty(resource.object) : resource.object;
  const violations = objectViolations(minor, crds, object as JsonMap);
  if (violations === undefined && isBuiltInGroup(minor, resource.apiVersion)) {
    const message = `Kubernetes ${releaseOf(minor)} serves no kind ${resource.kind} in ${resource.apiVersion}`;
    context.reporter.report({ origin: resource.origin, path: ["kind"], code: "SCHEMA_VIOLATION", message });
  }
  for (const violation of violations ?? []) report(context, resource, violation);
}

function placeOf(problem: { file: string; line: number; column: number }): string {
  return `${problem.file}:${problem.line}:${problem.column}`;
}

function report(context: RuleContext, resource: Resource, violation: Violation): void {
  context.reporter.report({
    origin: resource.origin,
    path: violation.path,
    code: "SCHEMA_VIOLATION",
    message: violation.message,
    ...(violation.target ? { target: violation.target } : {}),
  });
}
