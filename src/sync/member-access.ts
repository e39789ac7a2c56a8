import type { JsonMap } from "../apimachinery/json.js";
import { compareStrings } from "../model/file-tree.js";
import type { FleetModel } from "../model/types.js";
import type { RenderedObject } from "../render/render-result.js";
import { INVENTORY_NAMESPACE } from "./inventory.js";
import { teamGrantRules } from "./team-access.js";

/** The ServiceAccount gitfleet syncs a joined member as, in INVENTORY_NAMESPACE. */
export const MEMBER_ACCOUNT = "gitfleet";

/** A kind gitfleet applies, as the member serves it. */
export interface AppliedResource {
  readonly group: string;
  readonly resource: string;
}

/** The kinds a fleet applies anywhere: every template of every app, every rendered object (hosted control planes' too). */
export function appliedKinds(
  model: FleetModel,
  objects: readonly RenderedObject[],
): { apiVersion: string; kind: string }[] {
  const kinds = new Map<string, { apiVersion: string; kind: string }>();
  const add = (apiVersion: unknown, kind: unknown) => {
    if (typeof apiVersion === "string" && typeof kind === "string")
      kinds.set(`${apiVersion}\0${kind}`, { apiVersion, kind });
  };
  for (const app of model.apps) for (const resource of app.resources) add(resource.apiVersion, resource.kind);
  for (const rendered of objects) add(rendered.object.apiVersion, rendered.object.kind);
  return [...kinds.values()].sort((a, b) =>
    compareStrings(`${a.apiVersion}/${a.kind}`, `${b.apiVersion}/${b.kind}`),
  );
}

const WRITE = ["get", "list", "watch", "create", "update", "patch", "delete"];
const READ = ["get", "list", "watch"];
const RBAC = "rbac.authorization.k8s.io";

/**
 * What gitfleet needs in a push-mode member, and nothing more (the objects `gitfleet join` creates):
 * its ServiceAccount; a ClusterRole to write the kinds the fleet applies (`applied`), to read what it
 * observes (nodes and pods for capacity and health, autoscalers, quotas, resource and custom metrics,
 * discovery, readiness), to create namespaces, and — when the fleet has teams — to keep the teams'
 * accounts and RBAC and grant what their bounds allow (a member refuses a role that grants more than
 * its creator holds); a Role in its own namespace for the inventory and, with teams, to impersonate
 * the teams' accounts. Pure: the same fleet gives the same objects.
 */
export function memberAccessObjects(model: FleetModel, applied: readonly AppliedResource[]): JsonMap[] {
  const labels = {
    "app.kubernetes.io/managed-by": "gitfleet",
    "app.kubernetes.io/component": "member-access",
  };
  const name = `gitfleet-member`;
  const subject = { kind: "ServiceAccount", name: MEMBER_ACCOUNT, namespace: INVENTORY_NAMESPACE };
  const teams = model.teams.length > 0;
  const rules: JsonMap[] = [
    ...writeRules(applied),
    { apiGroups: [""], resources: ["namespaces"], verbs: ["get", "list", "watch", "create", "patch"] },
    { apiGroups: [""], resources: ["nodes", "pods", "resourcequotas"], verbs: READ },
    { apiGroups: ["autoscaling"], resources: ["horizontalpodautoscalers"], verbs: READ },
    { apiGroups: ["metrics.k8s.io"], resources: ["pods", "nodes"], verbs: ["get", "list"] },
    {
      apiGroups: ["custom.metrics.k8s.io", "external.metrics.k8s.io"],
      resources: ["*"],
      verbs: ["get", "list"],
    },
    {
      nonResourceURLs: ["/api", "/api/*", "/apis", "/apis/*", "/version", "/readyz", "/livez", "/healthz"],
      verbs: ["get"],
    },
    ...(teams
      ? [
          {
            apiGroups: [RBAC],
            resources: ["clusterroles", "clusterrolebindings", "rolebindings"],
            verbs: WRITE,
          },
          ...teamGrantRules(model),
        ]
      : []),
  ];
  const own: JsonMap[] = [
    { apiGroups: [""], resources: ["configmaps"], verbs: WRITE },
    ...(teams
      ? [
          { apiGroups: [""], resources: ["serviceaccounts"], verbs: WRITE },
          { apiGroups: [""], resources: ["serviceaccounts"], verbs: ["impersonate"] },
        ]
      : []),
  ];
  const roleRef = (kind: string) => ({ apiGroup: RBAC, kind, name });
  return [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: INVENTORY_NAMESPACE, labels } },
    {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: MEMBER_ACCOUNT, namespace: INVENTORY_NAMESPACE, labels },
    },
    { apiVersion: `${RBAC}/v1`, kind: "ClusterRole", metadata: { name, labels }, rules },
    {
      apiVersion: `${RBAC}/v1`,
      kind: "ClusterRoleBinding",
      metadata: { name, labels },
      roleRef: roleRef("ClusterRole"),
      subjects: [subject],
    },
    {
      apiVersion: `${RBAC}/v1`,
      kind: "Role",
      metadata: { name, namespace: INVENTORY_NAMESPACE, labels },
      rules: own,
    },
    {
      apiVersion: `${RBAC}/v1`,
      kind: "RoleBinding",
      metadata: { name, namespace: INVENTORY_NAMESPACE, labels },
      roleRef: roleRef("Role"),
      subjects: [subject],
    },
  ];
}

// One rule per API group, its resources sorted: write access to each kind the fleet applies.
function writeRules(applied: readonly AppliedResource[]): JsonMap[] {
  const byGroup = new Map<string, Set<string>>();
  for (const { group, resource } of applied)
    byGroup.set(group, (byGroup.get(group) ?? new Set()).add(resource));
  return [...byGroup.entries()]
    .sort(([a], [b]) => compareStrings(a, b))
    .map(([group, resources]) => ({
      apiGroups: [group],
      resources: [...resources].sort(compareStrings),
      verbs: WRITE,
    }));
}
