import { groupKind } from "../../apimachinery/kinds.js";
import { kindName } from "../load-policy.js";
import { PROTECTED_KINDS } from "../protected-kinds.js";
import {
  ARGO_HOOK_ANNOTATION,
  explainSyncAnnotations,
  HELM_HOOK_ANNOTATION,
  HOOK_ANNOTATION,
  syncRoleOf,
} from "../sync-annotations.js";
import type { App, Resource } from "../types.js";
import { RememberedFindings } from "./remembered-findings.js";
import type { RuleContext } from "./rule.js";

/**
 * What orders a sync must be readable before it runs: apps' dependsOn form no cycle (an app in one
 * would wait forever), the sync-wave, hook and replica-scheduling annotations of every manifest are
 * ones gitfleet reads (a typo would silently sync in the wrong order), and no hook is of a kind whose
 * replacement would delete what someone else keeps.
 */
export function checkSyncOrder(context: RuleContext): void {
  checkDependencyCycles(context);
  for (const resource of context.model.apps.flatMap((app) => app.resources))
    remembered.check(
      context,
      resource,
      (own) => {
        const annotations = (
          resource.object.metadata as { annotations?: Record<string, unknown> } | undefined
        )?.annotations;
        for (const problem of explainSyncAnnotations(annotations))
          own.reporter.report({
            origin: resource.origin,
            path: ["metadata", "annotations", problem.key],
            code: "INVALID_ANNOTATION",
            message: problem.message,
          });
        checkHookKind(own, resource, annotations);
      },
      [context.policy.hookKinds],
    );
}

// A hook is made afresh for each run — what held its identity before is deleted — so a hook may not
// be cluster-scoped or of a kind whose deletion loses data (a Namespace, a PV or PVC, a CRD) unless
// the operator allows that kind (--allow-hook-kind).
function checkHookKind(
  context: RuleContext,
  resource: Resource,
  annotations: Readonly<Record<string, unknown>> | undefined,
): void {
  if (syncRoleOf(annotations).kind !== "hook") return;
  const key = groupKind(resource.group, resource.kind);
  const protectedKind = PROTECTED_KINDS.has(key);
  if ((resource.namespace !== undefined && !protectedKind) || context.policy.hookKinds.has(key)) return;
  const annotation =
    [HOOK_ANNOTATION, ARGO_HOOK_ANNOTATION, HELM_HOOK_ANNOTATION].find(
      (k) => annotations?.[k] !== undefined,
    ) ?? HOOK_ANNOTATION;
  const why = protectedKind ? "deleting one loses what it holds" : "it is cluster-scoped";
  context.reporter.report({
    origin: resource.origin,
    path: ["metadata", "annotations", annotation],
    code: "FORBIDDEN_HOOK",
    message: `a ${resource.kind} may not be a hook: each run deletes and makes its hook afresh, and ${why}; make it an ordinary object, or have the operator allow the kind (--allow-hook-kind ${kindName(key)})`,
  });
}

const remembered = new RememberedFindings("sync-order");

// Each cycle once, at every dependsOn entry on it: "dependency cycle: web → api → web".
function checkDependencyCycles(context: RuleContext): void {
  const apps = new Map(context.model.apps.map((app) => [app.name, app]));
  const dependsOn = (app: App | undefined) => app?.definition?.spec.dependsOn ?? [];
  const state = new Map<string, "visiting" | "done">();
  const stack: string[] = [];
  const reported = new Set<string>();
  const visit = (name: string): void => {
    state.set(name, "visiting");
    stack.push(name);
    for (const next of dependsOn(apps.get(name))) {
      if (!apps.has(next)) continue;
      if (state.get(next) === "visiting")
        reportCycle(context, apps, [...stack.slice(stack.indexOf(next)), next], reported);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(name, "done");
  };
  for (const name of [...apps.keys()].sort()) if (!state.has(name)) visit(name);
}

function reportCycle(
  context: RuleContext,
  apps: ReadonlyMap<string, App>,
  cycle: readonly string[],
  reported: Set<string>,
): void {
  const text = cycle.join(" → ");
  for (const [i, name] of cycle.slice(0, -1).entries()) {
    const definition = apps.get(name)?.definition;
    const next = cycle[i + 1] ?? "";
    const index = definition?.spec.dependsOn?.indexOf(next) ?? -1;
    if (!definition || index < 0 || reported.has(`${name}\0${next}`)) continue;
    reported.add(`${name}\0${next}`);
    context.reporter.report({
      origin: definition.origin,
      path: ["spec", "dependsOn", index],
      code: "DEPENDENCY_CYCLE",
      message: `dependency cycle: ${text}; an app on a cycle would wait for itself forever`,
    });
  }
}
