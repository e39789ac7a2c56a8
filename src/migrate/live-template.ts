import { asList, asMap, isJsonMap, type Json, type JsonMap } from "../apimachinery/json.js";
import { explainInvalidPathSegmentName } from "../apimachinery/names.js";
import { SERVER_SET_METADATA } from "../apimachinery/server-metadata.js";

/** What `gitfleet import` makes of one live object: the template a fleet repo holds, or why none. */
export type LiveTemplate = { readonly template: JsonMap } | { readonly skipped: string };

// Metadata the API server sets, and what it derives from the writer's request or owner.
const NOT_WRITTEN = new Set([...SERVER_SET_METADATA, "generateName", "ownerReferences"]);

// Annotations tools and controllers write about an object, not into it.
const TOOL_ANNOTATIONS = [
  /^kubectl\.kubernetes\.io\/last-applied-configuration$/,
  /^deployment\.kubernetes\.io\/revision$/,
  /^pv\.kubernetes\.io\//,
  /^volume\.kubernetes\.io\//,
  /^volume\.beta\.kubernetes\.io\//,
  /^control-plane\.alpha\.kubernetes\.io\//,
  /^autoscaling\.alpha\.kubernetes\.io\//,
  /^endpoints\.kubernetes\.io\//,
];

// Objects every namespace has, made by Kubernetes itself.
const BUILT_IN_OBJECTS = new Set(["ConfigMap/kube-root-ca.crt", "ServiceAccount/default"]);

/**
 * The template of a live object, as a person would have written it: the server's metadata, status,
 * tools' annotations and what the API server allocates (a Service's cluster IPs and node ports, a
 * claim's bound volume, a ServiceAccount's token Secrets) left out; the pod template kept exactly as
 * it runs, so adopting it restarts nothing. Skipped: objects a controller owns (ReplicaSets' pods, a
 * CronJob's Jobs), objects gitfleet already manages, the namespace's built-in objects, and Secrets,
 * whose values never go to Git.
 */
export function liveTemplate(live: JsonMap, appNamespace: string): LiveTemplate {
  const metadata = asMap(live.metadata);
  const kind = String(live.kind ?? "");
  const name = metadata.name;
  // A member's answer is untrusted, and the name becomes a file name in the fleet repo.
  const badName = typeof name === "string" ? explainInvalidPathSegmentName(name) : "it has no name";
  if (badName !== undefined) return { skipped: `not a valid object name: ${badName}` };
  if (asList(metadata.ownerReferences).length > 0) {
    const owner = asMap(asList(metadata.ownerReferences)[0]);
    return { skipped: `owned by ${String(owner.kind ?? "an owner")} ${String(owner.name ?? "")}`.trimEnd() };
  }
  if (asMap(metadata.labels)["app.kubernetes.io/managed-by"] === "gitfleet")
    return { skipped: "already managed by gitfleet" };
  if (BUILT_IN_OBJECTS.has(`${kind}/${name}`)) return { skipped: "made by Kubernetes in every namespace" };
  if (kind === "Secret")
    return {
      skipped:
        "a Secret's values never go to Git: encrypt it with sops into the app directory (docs/secrets.md), or keep it out of the fleet",
    };
  const template: JsonMap = {};
  for (const [key, value] of Object.entries(live)) if (key !== "status") template[key] = value;
  template.metadata = templateMetadata(metadata, appNamespace);
  const spec = asMap(live.spec);
  if (Object.keys(spec).length > 0) template.spec = withoutAllocated(kind, spec);
  if (kind === "ServiceAccount") delete template.secrets;
  return { template: withoutNulls(template) as JsonMap };
}

function templateMetadata(metadata: JsonMap, appNamespace: string): JsonMap {
  const kept: JsonMap = {};
  for (const [key, value] of Object.entries(metadata)) {
    if (NOT_WRITTEN.has(key) || (key === "namespace" && value === appNamespace)) continue;
    const written =
      key === "annotations"
        ? authorsAnnotations(value)
        : key === "finalizers"
          ? authorsFinalizers(value)
          : value;
    if (written !== undefined) kept[key] = written;
  }
  if (Object.keys(asMap(kept.labels)).length === 0) delete kept.labels;
  return kept;
}

function authorsAnnotations(value: Json): JsonMap | undefined {
  const annotations = Object.fromEntries(
    Object.entries(asMap(value)).filter(([k]) => !TOOL_ANNOTATIONS.some((pattern) => pattern.test(k))),
  );
  return Object.keys(annotations).length > 0 ? annotations : undefined;
}

// Kubernetes' own finalizers (pvc-protection, foregroundDeletion) are the server's to add.
function authorsFinalizers(value: Json): Json[] | undefined {
  const finalizers = asList(value).filter((f) => typeof f === "string" && !f.startsWith("kubernetes.io/"));
  return finalizers.length > 0 ? finalizers : undefined;
}

// What the API server allocated in a spec, which differs in every cluster and is not the author's.
function withoutAllocated(kind: string, spec: JsonMap): JsonMap {
  const out: JsonMap = { ...spec };
  if (kind === "Service") {
    if (out.clusterIP !== "None") {
      delete out.clusterIP;
      delete out.clusterIPs;
    }
    delete out.healthCheckNodePort;
    if (Array.isArray(out.ports))
      out.ports = out.ports.map((port) => {
        if (!isJsonMap(port)) return port;
        const { nodePort: _allocated, ...rest } = port;
        return rest;
      });
  }
  if (kind === "PersistentVolumeClaim") delete out.volumeName;
  return out;
}

// Nulls are fields the server printed empty (a pod template's creationTimestamp): absent is the same.
function withoutNulls(value: Json): Json {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (!isJsonMap(value)) return value;
  const out: JsonMap = {};
  for (const [key, child] of Object.entries(value)) if (child !== null) out[key] = withoutNulls(child);
  return out;
}
