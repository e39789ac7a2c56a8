import { createHash } from "node:crypto";
import fc from "fast-check";
import type { Json } from "../../src/apimachinery/json.js";

/**
 * Random Deployments, StatefulSets, Services and Pods, and random strategic merge patches over
 * them (containers, env, ports, volumes, tolerations, finalizers, labels, and every directive), for
 * the differential test against kubectl.
 */

const names = fc.constantFrom("app", "sidecar", "init", "proxy");
const envNames = fc.constantFrom("A", "B", "C", "LOG_LEVEL");
const ports = fc.constantFrom(80, 443, 8080, 9090);
const mounts = fc.constantFrom("/data", "/config", "/cache");
const volumeNames = fc.constantFrom("data", "config", "cache");
const finalizers = fc.constantFrom("a.example.com/x", "b.example.com/y", "c.example.com/z");
const small = fc.constantFrom("v1", "v2", "debug", "info", "on-prem");

const env = fc.record({ name: envNames, value: small });
const port = fc.record(
  { containerPort: ports, name: fc.constantFrom("http", "https", "metrics") },
  { requiredKeys: ["containerPort"] },
);
const mount = fc.record({ name: volumeNames, mountPath: mounts });
const container = fc.record(
  {
    name: names,
    image: fc.constantFrom("nginx:1.27", "busybox:1.36", "ghcr.io/example/app:2"),
    env: fc.uniqueArray(env, { selector: (e) => e.name, maxLength: 3 }),
    ports: fc.uniqueArray(port, { selector: (p) => p.containerPort, maxLength: 2 }),
    volumeMounts: fc.uniqueArray(mount, { selector: (m) => m.mountPath, maxLength: 2 }),
    args: fc.array(small, { maxLength: 2 }),
    resources: fc.record({
      requests: fc.record(
        { cpu: fc.constantFrom("100m", "1"), memory: fc.constantFrom("64Mi", "1Gi") },
        { requiredKeys: [] },
      ),
    }),
  },
  { requiredKeys: ["name", "image"] },
);
const volume = fc.oneof(
  fc.record({ name: volumeNames, emptyDir: fc.constant({}) }),
  fc.record({ name: volumeNames, configMap: fc.record({ name: small }) }),
);
const toleration = fc.record({
  key: fc.constantFrom("gpu", "spot"),
  operator: fc.constantFrom("Exists", "Equal"),
  effect: fc.constantFrom("NoSchedule", "NoExecute"),
});
const labels = fc.dictionary(fc.constantFrom("app", "tier", "team"), small, { maxKeys: 3 });

const podSpec = fc.record(
  {
    containers: fc.uniqueArray(container, { selector: (c) => c.name, minLength: 1, maxLength: 3 }),
    volumes: fc.uniqueArray(volume, { selector: (v) => v.name, maxLength: 2 }),
    tolerations: fc.array(toleration, { maxLength: 2 }),
    imagePullSecrets: fc.uniqueArray(fc.record({ name: small }), { selector: (s) => s.name, maxLength: 2 }),
    nodeSelector: labels,
  },
  { requiredKeys: ["containers"] },
);
const metadata = fc.record(
  { name: fc.constant("web"), labels, finalizers: fc.uniqueArray(finalizers, { maxLength: 2 }) },
  { requiredKeys: ["name"] },
);

/** A random built-in object and the path of its pod spec (if any). */
export const objectArb: fc.Arbitrary<{ object: Json; podSpecPath: string[] | undefined }> = fc.oneof(
  fc
    .record({
      kind: fc.constantFrom("Deployment", "StatefulSet"),
      metadata,
      podSpec,
      labels,
      replicas: fc.nat({ max: 5 }),
    })
    .map(({ kind, metadata, podSpec, labels, replicas }) => ({
      object: {
        apiVersion: "apps/v1",
        kind,
        metadata,
        spec: {
          replicas,
          ...(kind === "Deployment"
            ? { strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1 } } }
            : {}),
          template: { metadata: { labels }, spec: podSpec },
        },
      } as Json,
      podSpecPath: ["spec", "template", "spec"],
    })),
  fc.record({ metadata, podSpec }).map(({ metadata, podSpec }) => ({
    object: { apiVersion: "v1", kind: "Pod", metadata, spec: podSpec } as Json,
    podSpecPath: ["spec"],
  })),
  fc
    .record({
      metadata,
      ports: fc.uniqueArray(fc.record({ port: ports, targetPort: ports, name: small }), {
        selector: (p) => p.port,
        minLength: 1,
        maxLength: 3,
      }),
    })
    .map(({ metadata, ports }) => ({
      object: { apiVersion: "v1", kind: "Service", metadata, spec: { type: "ClusterIP", ports } } as Json,
      podSpecPath: undefined,
    })),
);

const containerPatch = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record(
      {
        name: names,
        image: fc.constantFrom("nginx:1.28", "alpine:3"),
        env: fc.array(fc.oneof(env, fc.record({ name: envNames, $patch: fc.constant("delete") })), {
          maxLength: 2,
        }),
        ports: fc.array(port, { maxLength: 1 }),
        args: fc.array(small, { maxLength: 2 }),
        resources: fc.record({ limits: fc.record({ cpu: fc.constantFrom("2", "500m") }) }),
      },
      { requiredKeys: ["name"] },
    ),
  },
  { weight: 1, arbitrary: fc.record({ name: names, $patch: fc.constant("delete") }) },
  {
    weight: 1,
    arbitrary: fc.record({
      name: names,
      env: fc.constant(null),
      volumeMounts: fc.array(mount, { maxLength: 1 }),
    }),
  },
);

const podSpecPatch = fc
  .record(
    {
      // At most one delete and one change per container: a list naming the same key twice is a broken
      // patch, and kubectl's result for it is an accident of its implementation.
      containers: fc.uniqueArray(containerPatch, {
        minLength: 1,
        maxLength: 3,
        selector: (c) => `${c.name}/${"$patch" in c ? "delete" : "change"}`,
      }),
      "$setElementOrder/containers": fc.uniqueArray(names, { minLength: 1, maxLength: 4 }),
      volumes: fc.array(fc.oneof(volume, fc.record({ name: volumeNames, $patch: fc.constant("delete") })), {
        maxLength: 2,
      }),
      tolerations: fc.array(toleration, { maxLength: 2 }),
      nodeSelector: fc.oneof(labels, fc.constant(null), fc.constant({ $patch: "replace", zone: "a" })),
      imagePullSecrets: fc.array(fc.record({ name: small }), { maxLength: 1 }),
    },
    { requiredKeys: [] },
  )
  .map(consistentElementOrder);

// Mostly a valid $setElementOrder: the patch's containers in patch order, with other names around
// them; sometimes the random one as drawn (kubectl refuses most of those, and so must we).
function consistentElementOrder(patch: {
  containers?: Json[];
  "$setElementOrder/containers"?: string[];
}): Json {
  const drawn = patch["$setElementOrder/containers"];
  if (drawn === undefined) return patch as Json;
  const patched = (patch.containers ?? []).flatMap((c) =>
    typeof c === "object" && c !== null && !Array.isArray(c) && !("$patch" in c) ? [String(c.name)] : [],
  );
  const others = drawn.filter((name) => !patched.includes(name));
  const order = drawn.length % 4 === 0 ? drawn : [...others.slice(0, 1), ...patched, ...others.slice(1)];
  return { ...patch, "$setElementOrder/containers": order.map((name) => ({ name })) } as Json;
}

// A patch that both adds and deletes the same finalizer is left out: kubectl applies the two in Go map
// order, so its result varies from run to run (gitfleet applies the deletion last; see the unit tests).
const metadataPatch = fc
  .record(
    {
      labels: fc.oneof(
        fc.dictionary(fc.constantFrom("app", "tier", "team"), fc.oneof(small, fc.constant(null)), {
          maxKeys: 2,
        }),
        fc.constant(null),
      ),
      finalizers: fc.uniqueArray(finalizers, { maxLength: 2 }),
      "$deleteFromPrimitiveList/finalizers": fc.uniqueArray(finalizers, { maxLength: 1 }),
    },
    { requiredKeys: [] },
  )
  .filter(
    (patch) =>
      !(patch["$deleteFromPrimitiveList/finalizers"] ?? []).some((f) => (patch.finalizers ?? []).includes(f)),
  );

/** A random patch for an object with a pod spec at `podSpecPath` (or a Service when undefined). */
export function patchArb(podSpecPath: string[] | undefined): fc.Arbitrary<Json> {
  if (podSpecPath === undefined) {
    const servicePorts = fc.array(
      fc.oneof(
        fc.record({ port: ports, targetPort: ports }),
        fc.record({ port: ports, $patch: fc.constant("delete") }),
      ),
      { maxLength: 2 },
    );
    return fc.record(
      {
        metadata: metadataPatch,
        spec: fc.record(
          { ports: servicePorts, type: fc.constantFrom("ClusterIP", "NodePort") },
          { requiredKeys: [] },
        ),
      },
      { requiredKeys: [] },
    ) as fc.Arbitrary<Json>;
  }
  return fc
    .record({ metadata: metadataPatch, spec: podSpecPatch }, { requiredKeys: [] })
    .map(({ metadata, spec }) => {
      const patch: Record<string, Json> = {};
      if (metadata) patch.metadata = metadata as Json;
      if (spec) patch.spec = nest(podSpecPath.slice(1), spec as Json);
      return patch as Json;
    });
}

function nest(path: string[], value: Json): Json {
  return path.reduceRight<Json>((inner, key) => ({ [key]: inner }), value);
}

/** The differential cases of one seed: an object and a patch each, the same on every run. */
export function smpCases(count: number, seed: number): [Json, Json][] {
  return fc.sample(
    objectArb.chain(({ object, podSpecPath }) => fc.tuple(fc.constant(object), patchArb(podSpecPath))),
    { numRuns: count, seed },
  );
}

/** A short digest of a JSON value with its keys sorted: kubectl's answer, recorded without its bulk. */
export function jsonDigest(value: Json): string {
  const canonical = (v: Json): Json =>
    Array.isArray(v)
      ? v.map(canonical)
      : v !== null && typeof v === "object"
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, canonical((v as Record<string, Json>)[k] as Json)]),
          )
        : v;
  return createHash("sha256")
    .update(JSON.stringify(canonical(value)))
    .digest("hex")
    .slice(0, 16);
}
