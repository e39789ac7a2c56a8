#!/usr/bin/env node
// Generates schema/kubernetes/v<minor>.json: the OpenAPI v3 schemas of the built-in kinds of a
// pinned Kubernetes release, compacted for validating manifests. The source is the release's own
// api/openapi-spec/v3/ (k8s.io/kubernetes@<version> from the Go module proxy, via `go mod download`);
// descriptions are dropped, except that the "Possible enum values" they list become `enum`, which
// the published specs carry only in prose. Run with no arguments to regenerate every pinned release:
//   node scripts/kubernetes-schemas.mjs
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Enumerations: the published v3 specs give these fields as plain strings (their `+enum` markers in
 * k8s.io/api reach only the descriptions of some releases), so the values are listed here, per
 * definition and field, as the API types in k8s.io/api define them. A field of an array takes the
 * values for each item.
 */
const ENUMS = {
  "io.k8s.api.core.v1.Container": {
    imagePullPolicy: ["Always", "Never", "IfNotPresent"],
    terminationMessagePolicy: ["File", "FallbackToLogsOnError"],
  },
  "io.k8s.api.core.v1.EphemeralContainer": {
    imagePullPolicy: ["Always", "Never", "IfNotPresent"],
    terminationMessagePolicy: ["File", "FallbackToLogsOnError"],
  },
  "io.k8s.api.core.v1.ContainerPort": { protocol: ["TCP", "UDP", "SCTP"] },
  "io.k8s.api.core.v1.ServicePort": { protocol: ["TCP", "UDP", "SCTP"] },
  "io.k8s.api.core.v1.EndpointPort": { protocol: ["TCP", "UDP", "SCTP"] },
  "io.k8s.api.core.v1.PodSpec": {
    restartPolicy: ["Always", "OnFailure", "Never"],
    dnsPolicy: ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"],
    preemptionPolicy: ["PreemptLowerPriority", "Never"],
  },
  "io.k8s.api.core.v1.ServiceSpec": {
    type: ["ClusterIP", "NodePort", "LoadBalancer", "ExternalName"],
    externalTrafficPolicy: ["Cluster", "Local"],
    internalTrafficPolicy: ["Cluster", "Local"],
    sessionAffinity: ["ClientIP", "None"],
    ipFamilyPolicy: ["SingleStack", "PreferDualStack", "RequireDualStack"],
    ipFamilies: ["IPv4", "IPv6"],
  },
  "io.k8s.api.core.v1.Toleration": {
    operator: ["Exists", "Equal"],
    effect: ["NoSchedule", "PreferNoSchedule", "NoExecute"],
  },
  "io.k8s.api.core.v1.Taint": { effect: ["NoSchedule", "PreferNoSchedule", "NoExecute"] },
  "io.k8s.api.core.v1.NodeSelectorRequirement": {
    operator: ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"],
  },
  "io.k8s.api.core.v1.TopologySpreadConstraint": {
    whenUnsatisfiable: ["DoNotSchedule", "ScheduleAnyway"],
    nodeAffinityPolicy: ["Honor", "Ignore"],
    nodeTaintsPolicy: ["Honor", "Ignore"],
  },
  "io.k8s.api.core.v1.PersistentVolumeClaimSpec": {
    accessModes: ["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"],
    volumeMode: ["Block", "Filesystem"],
  },
  "io.k8s.api.core.v1.HTTPGetAction": { scheme: ["HTTP", "HTTPS"] },
  "io.k8s.api.apps.v1.DeploymentStrategy": { type: ["Recreate", "RollingUpdate"] },
  "io.k8s.api.apps.v1.StatefulSetSpec": { podManagementPolicy: ["OrderedReady", "Parallel"] },
  "io.k8s.api.apps.v1.StatefulSetUpdateStrategy": { type: ["RollingUpdate", "OnDelete"] },
  "io.k8s.api.apps.v1.DaemonSetUpdateStrategy": { type: ["RollingUpdate", "OnDelete"] },
  "io.k8s.api.batch.v1.JobSpec": { completionMode: ["NonIndexed", "Indexed"] },
  "io.k8s.api.batch.v1.CronJobSpec": { concurrencyPolicy: ["Allow", "Forbid", "Replace"] },
  "io.k8s.api.autoscaling.v2.MetricSpec": {
    type: ["Object", "Pods", "Resource", "ContainerResource", "External"],
  },
  "io.k8s.api.autoscaling.v2.MetricTarget": { type: ["Utilization", "Value", "AverageValue"] },
  "io.k8s.api.networking.v1.HTTPIngressPath": { pathType: ["Exact", "Prefix", "ImplementationSpecific"] },
  "io.k8s.api.networking.v1.NetworkPolicySpec": { policyTypes: ["Ingress", "Egress"] },
  "io.k8s.api.policy.v1.PodDisruptionBudgetSpec": {
    unhealthyPodEvictionPolicy: ["IfHealthyBudget", "AlwaysAllow"],
  },
};

/**
 * Bounds the API server's validation enforces on numbers (counts never negative, ports in range),
 * which the OpenAPI specs do not state: [minimum, maximum] per definition and field.
 */
const PORT = [1, 65535];
const BOUNDS = {
  "io.k8s.api.apps.v1.DeploymentSpec": {
    replicas: [0],
    minReadySeconds: [0],
    revisionHistoryLimit: [0],
    progressDeadlineSeconds: [0],
  },
  "io.k8s.api.apps.v1.ReplicaSetSpec": { replicas: [0], minReadySeconds: [0] },
  "io.k8s.api.apps.v1.StatefulSetSpec": { replicas: [0], minReadySeconds: [0], revisionHistoryLimit: [0] },
  "io.k8s.api.apps.v1.DaemonSetSpec": { minReadySeconds: [0], revisionHistoryLimit: [0] },
  "io.k8s.api.core.v1.ReplicationControllerSpec": { replicas: [0], minReadySeconds: [0] },
  "io.k8s.api.batch.v1.JobSpec": {
    parallelism: [0],
    completions: [0],
    backoffLimit: [0],
    activeDeadlineSeconds: [1],
    ttlSecondsAfterFinished: [0],
  },
  "io.k8s.api.batch.v1.CronJobSpec": {
    successfulJobsHistoryLimit: [0],
    failedJobsHistoryLimit: [0],
    startingDeadlineSeconds: [0],
  },
  "io.k8s.api.core.v1.ContainerPort": { containerPort: PORT, hostPort: PORT },
  "io.k8s.api.core.v1.ServicePort": { port: PORT, nodePort: [0, 65535] },
  "io.k8s.api.core.v1.PodSpec": { terminationGracePeriodSeconds: [0], activeDeadlineSeconds: [1] },
  "io.k8s.api.core.v1.Probe": {
    initialDelaySeconds: [0],
    periodSeconds: [1],
    timeoutSeconds: [1],
    successThreshold: [1],
    failureThreshold: [1],
  },
  "io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerSpec": { minReplicas: [0], maxReplicas: [1] },
  "io.k8s.api.autoscaling.v1.HorizontalPodAutoscalerSpec": { minReplicas: [0], maxReplicas: [1] },
};

/** The releases gitfleet validates against: one patch release per supported minor. */
const RELEASES = ["v1.34.4", "v1.35.4", "v1.36.3"];

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

for (const release of RELEASES) {
  const download = JSON.parse(
    execFileSync("go", ["mod", "download", "-json", `k8s.io/kubernetes@${release}`], {
      encoding: "utf8",
      env: { ...process.env, GOFLAGS: "-mod=mod" },
    }),
  );
  const prefix = `k8s.io/kubernetes@${release}/api/openapi-spec/v3/`;
  const names = execFileSync("unzip", ["-Z1", download.Zip], { encoding: "utf8", maxBuffer: 2 ** 28 })
    .split("\n")
    .filter((name) => name.startsWith(prefix) && name.endsWith("_openapi.json"));
  const definitions = {};
  const kinds = {};
  for (const name of names) {
    const spec = JSON.parse(
      execFileSync("unzip", ["-p", download.Zip, name], { maxBuffer: 2 ** 28 }).toString(),
    );
    for (const [definition, schema] of Object.entries(spec.components?.schemas ?? {})) {
      definitions[definition] ??= withBounds(definition, withEnums(definition, compact(schema)));
      for (const gvk of schema["x-kubernetes-group-version-kind"] ?? []) {
        // Every kind lists the meta types (DeleteOptions, WatchEvent) under each group; keep its own.
        if (definition.endsWith(`.${gvk.kind}`) && !definition.startsWith("io.k8s.apimachinery."))
          kinds[`${gvk.group ? `${gvk.group}/` : ""}${gvk.version}/${gvk.kind}`] = definition;
      }
    }
  }
  const minor = release.replace(/^v(\d+\.\d+)\..*$/, "$1");
  const out = join(root, "schema", "kubernetes", `v${minor}.json`);
  mkdirSync(dirname(out), { recursive: true });
  const sortedKinds = Object.fromEntries(Object.entries(kinds).sort(([a], [b]) => (a < b ? -1 : 1)));
  const sortedDefinitions = Object.fromEntries(
    Object.entries(definitions).sort(([a], [b]) => (a < b ? -1 : 1)),
  );
  writeFileSync(
    out,
    `${JSON.stringify({ release: release.slice(1), source: `k8s.io/kubernetes@${release}/api/openapi-spec/v3`, kinds: sortedKinds, definitions: sortedDefinitions })}\n`,
  );
  console.log(
    `${out}: ${Object.keys(sortedKinds).length} kinds, ${Object.keys(sortedDefinitions).length} definitions`,
  );
}

// The parts of a schema validation needs, with references shortened to the definition's name.
function compact(schema) {
  const out = {};
  const ref = schema.$ref ?? (schema.allOf?.length === 1 ? schema.allOf[0].$ref : undefined);
  if (ref) return { ref: ref.replace("#/components/schemas/", "") };
  if (schema.type) out.type = schema.type;
  if (schema.format) out.format = schema.format;
  if (schema.oneOf) out.oneOf = schema.oneOf.map((s) => s.type);
  if (schema.required?.length) out.required = schema.required;
  const values = enumFrom(schema.description);
  if (values) out.enum = values;
  if (schema.properties)
    out.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, compact(v)]));
  if (schema.items) out.items = compact(schema.items);
  if (schema.additionalProperties && typeof schema.additionalProperties === "object")
    out.additionalProperties = compact(schema.additionalProperties);
  if (schema["x-kubernetes-preserve-unknown-fields"]) out.preserveUnknownFields = true;
  if (schema["x-kubernetes-int-or-string"]) out.format = "int-or-string";
  if (schema["x-kubernetes-embedded-resource"]) out.embeddedResource = true;
  return out;
}

function withBounds(definition, schema) {
  for (const [field, [minimum, maximum]] of Object.entries(BOUNDS[definition] ?? {})) {
    const property = schema.properties?.[field];
    if (!property) continue;
    property.minimum = minimum;
    if (maximum !== undefined) property.maximum = maximum;
  }
  return schema;
}

function withEnums(definition, schema) {
  for (const [field, values] of Object.entries(ENUMS[definition] ?? {})) {
    const property = schema.properties?.[field];
    if (!property) continue;
    if (property.type === "array" && property.items) property.items = { ...property.items, enum: values };
    else property.enum = values;
  }
  return schema;
}

// "Possible enum values:\n - `"Always"` means …" in a field's description.
function enumFrom(description) {
  const at = description?.indexOf("Possible enum values:") ?? -1;
  if (at < 0) return undefined;
  const values = [...description.slice(at).matchAll(/^ - `"([^"]*)"`/gm)].map((m) => m[1]);
  return values.length > 0 ? values : undefined;
}
