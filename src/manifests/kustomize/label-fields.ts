import { isJsonMap, type Json, type JsonMap } from "../../apimachinery/json.js";

// Where kustomize puts labels, from its default field specs: every object's metadata.labels; with
// templates, the pod templates, a CronJob's job template and a StatefulSet's volume claim
// templates; with selectors, also the selectors and the label selectors inside affinity, spread
// constraints, PodDisruptionBudgets and NetworkPolicies (those only where they exist).and a StatefulSet's volume claim templates.

interface LabelField {
  readonly kind: string;
  readonly path: readonly string[];
  /** Created when missing; otherwise set only where the map already exists. */
  readonly create: boolean;
}

const field = (kind: string, path: string, create = true): LabelField => ({
  kind,
  path: path.split("/"),
  create,
});

const AFFINITY = [
  "spec/template/spec/affinity/podAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels",
  "spec/template/spec/affinity/podAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels",
  "spec/template/spec/affinity/podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels",
  "spec/template/spec/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels",
  "spec/template/spec/topologySpreadConstraints/labelSelector/matchLabels",
];

const TEMPLATE_FIELDS: readonly LabelField[] = [
  ...["ReplicationController", "Deployment", "ReplicaSet", "DaemonSet", "StatefulSet", "Job"].map((kind) =>
    field(kind, "spec/template/metadata/labels"),
  ),
  field("CronJob", "spec/jobTemplate/metadata/labels"),
  field("CronJob", "spec/jobTemplate/spec/template/metadata/labels"),
  field("StatefulSet", "spec/volumeClaimTemplates/metadata/labels"),
];

const SELECTOR_FIELDS: readonly LabelField[] = [
  field("Service", "spec/selector"),
  field("ReplicationController", "spec/selector"),
  field("Deployment", "spec/selector/matchLabels"),
  ...AFFINITY.map((path) => field("Deployment", path, false)),
  field("ReplicaSet", "spec/selector/matchLabels"),
  field("DaemonSet", "spec/selector/matchLabels"),
  field("StatefulSet", "spec/selector/matchLabels"),
  ...AFFINITY.map((path) => field("StatefulSet", path, false)),
  field("Job", "spec/selector/matchLabels", false),
  field("CronJob", "spec/jobTemplate/spec/selector/matchLabels", false),
  field("PodDisruptionBudget", "spec/selector/matchLabels", false),
  field("NetworkPolicy", "spec/podSelector/matchLabels", false),
  field("NetworkPolicy", "spec/ingress/from/podSelector/matchLabels", false),
  field("NetworkPolicy", "spec/egress/to/podSelector/matchLabels", false),
];

/** Sets the labels on an object wherever the entry reaches. */
export function setLabels(
  object: JsonMap,
  labels: Readonly<Record<string, string>>,
  selectors: boolean,
  templates: boolean,
): void {
  const kind = String(object.kind);
  const fields: LabelField[] = [{ kind, path: ["metadata", "labels"], create: true }];
  if (templates || selectors) fields.push(...TEMPLATE_FIELDS.filter((f) => f.kind === kind));
  if (selectors) fields.push(...SELECTOR_FIELDS.filter((f) => f.kind === kind));
  for (const { path, create } of fields)
    for (const map of mapsAt(object, path, create)) Object.assign(map, labels);
}

const LISTS = new Set(["volumeClaimTemplates", "ingress", "egress", "from", "to"]);

// The maps at a path, walking into every element of the lists on the way; missing maps are
// created when `create` is set (never missing lists).
function mapsAt(node: Json | undefined, path: readonly string[], create: boolean): JsonMap[] {
  if (Array.isArray(node)) return node.flatMap((element) => mapsAt(element, path, create));
  if (!isJsonMap(node)) return [];
  if (path.length === 0) return [node];
  const [key, ...rest] = path as [string, ...string[]];
  if (node[key] === undefined || node[key] === null) {
    if (!create || LISTS.has(key)) return [];
    node[key] = {};
  }
  return mapsAt(node[key], rest, create);
}
