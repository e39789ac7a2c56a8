import protobuf from "protobufjs";
import { describe, expect, it } from "vitest";
import descriptor from "../../schema/kubernetes/protobuf-v1.36.json" with { type: "json" };
import type { JsonMap } from "../../src/apimachinery/json.js";
import { formatGoDuration, parseGoDuration } from "../../src/sim/protobuf/go-duration.js";
import {
  decodeObject,
  decodeWatchFrames,
  encodeObject,
  encodeWatchFrame,
  hasMessageType,
  messageType,
  PROTOBUF_SOURCE,
  ProtobufError,
} from "../../src/sim/protobuf/kube-protobuf.js";

/** Objects as the API server gives them in JSON: each survives protobuf and back unchanged. */
const ROUND_TRIPS: readonly JsonMap[] = [
  {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: "shop", labels: { team: "a" }, creationTimestamp: "2026-12-01T10:00:00Z" },
    spec: {},
    status: {},
  },
  {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: "web",
      namespace: "shop",
      creationTimestamp: "2026-12-01T10:00:00Z",
      generation: 3,
      managedFields: [
        {
          manager: "gitfleet",
          operation: "Apply",
          apiVersion: "apps/v1",
          time: "2026-12-01T10:00:00Z",
          fieldsType: "FieldsV1",
          fieldsV1: { "f:spec": { "f:replicas": {} } },
        },
      ],
    },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: "web" } },
      strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: "25%", maxUnavailable: 1 } },
      template: {
        metadata: { labels: { app: "web" }, creationTimestamp: null },
        spec: {
          containers: [
            {
              name: "main",
              image: "registry.example.com/web:1.0.0",
              ports: [{ containerPort: 8080, protocol: "TCP" }],
              resources: { requests: { cpu: "250m", memory: "64Mi" }, limits: { cpu: "1" } },
              readinessProbe: { httpGet: { path: "/healthz", port: "http" }, periodSeconds: 5 },
            },
          ],
        },
      },
    },
    status: {
      replicas: 2,
      readyReplicas: 2,
      conditions: [
        {
          type: "Available",
          status: "True",
          lastUpdateTime: "2026-12-01T10:00:01Z",
          lastTransitionTime: "2026-12-01T10:00:01Z",
        },
      ],
    },
  },
  {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "token", namespace: "shop", creationTimestamp: "2026-12-01T10:00:00Z" },
    type: "Opaque",
    data: { value: Buffer.from("not-a-real-token").toString("base64") },
  },
  {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: "web.1", namespace: "shop", creationTimestamp: "2026-12-01T10:00:00Z" },
    involvedObject: { kind: "Pod", name: "web-1", namespace: "shop" },
    reason: "Scheduled",
    message: "Successfully assigned shop/web-1 to east-node-0",
    count: 1,
    type: "Normal",
    eventTime: "2026-12-01T10:00:00.123456Z",
    firstTimestamp: "2026-12-01T10:00:00Z",
    lastTimestamp: "2026-12-01T10:00:00Z",
    source: { component: "default-scheduler" },
    reportingComponent: "default-scheduler",
  },
  {
    apiVersion: "v1",
    kind: "Status",
    metadata: {},
    status: "Failure",
    message: 'deployments.apps "web" not found',
    reason: "NotFound",
    details: { name: "web", group: "apps", kind: "deployments" },
    code: 404,
  },
  {
    apiVersion: "v1",
    kind: "NamespaceList",
    metadata: { resourceVersion: "42" },
    items: [
      {
        metadata: { name: "a", creationTimestamp: "2026-12-01T10:00:00Z" },
        spec: {},
        status: { phase: "Active" },
      },
    ],
  },
  {
    apiVersion: "apps/v1",
    kind: "ControllerRevision",
    metadata: { name: "web-1", namespace: "shop", creationTimestamp: "2026-12-01T10:00:00Z" },
    data: { spec: { template: { spec: { containers: [{ name: "main" }] } } } },
    revision: 1,
  },
];

describe("Kubernetes protobuf", () => {
  it.each(ROUND_TRIPS.map((object) => [`${object.kind}`, object] as const))(
    "%s survives protobuf and back unchanged",
    (_kind, object) => {
      const bytes = encodeObject(object);
      expect([...bytes.subarray(0, 4)]).toEqual([0x6b, 0x38, 0x73, 0x00]);
      expect(decodeObject(bytes)).toEqual(object);
    },
  );

  it("drops the zero values Go's JSON leaves out, and keeps pointers' zeros", () => {
    // What Go writes for a Service created by `kubectl create service`: every non-pointer field.
    const wire: JsonMap = {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "svc", generation: 0, namespace: "", creationTimestamp: null },
      spec: {
        ports: [{ name: "80-8080", port: 80, nodePort: 0, protocol: "TCP", targetPort: 8080 }],
        healthCheckNodePort: 0,
        publishNotReadyAddresses: false,
        clusterIP: "",
        type: "ClusterIP",
      },
      status: { loadBalancer: {} },
    };
    expect(decodeObject(encodeWithZeros(wire))).toEqual({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "svc", creationTimestamp: null },
      spec: { ports: [{ name: "80-8080", port: 80, protocol: "TCP", targetPort: 8080 }], type: "ClusterIP" },
      status: { loadBalancer: {} },
    });
    // containerPort has no omitempty: a zero stays.
    const pod: JsonMap = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p" },
      spec: { containers: [{ name: "c", ports: [{ containerPort: 0 }] }] },
    };
    expect(decodeObject(encodeWithZeros(pod))).toMatchObject({
      spec: { containers: [{ name: "c", ports: [{ containerPort: 0 }] }] },
    });
  });

  it.each([
    ["no prefix", Buffer.from('{"kind":"Namespace"}')],
    ["a custom resource", encodeUnknown("example.com/v1", "Widget", new Uint8Array())],
    ["no kind", encodeUnknown("v1", "", new Uint8Array())],
    ["a truncated message", encodeObject(ROUND_TRIPS[1] as JsonMap).subarray(0, 40)],
  ])("refuses %s with a ProtobufError", (_what, bytes) => {
    expect(() => decodeObject(bytes)).toThrow(ProtobufError);
  });

  it("knows the built-in kinds and none of the custom ones", () => {
    expect(messageType("v1", "Pod")?.fullName).toBe(".k8s.io.api.core.v1.Pod");
    expect(messageType("rbac.authorization.k8s.io/v1", "RoleBinding")?.fullName).toBe(
      ".k8s.io.api.rbac.v1.RoleBinding",
    );
    expect(messageType("authorization.k8s.io/v1", "SelfSubjectAccessReview")?.fullName).toBe(
      ".k8s.io.api.authorization.v1.SelfSubjectAccessReview",
    );
    expect(messageType("v1", "Status")?.fullName).toBe(".k8s.io.apimachinery.pkg.apis.meta.v1.Status");
    expect(hasMessageType({ apiVersion: "example.com/v1", kind: "Widget" })).toBe(false);
    expect(hasMessageType({ apiVersion: "meta.k8s.io/v1", kind: "Table" })).toBe(false);
  });

  it("frames watch events with a length and a WatchEvent", () => {
    const events = [
      { type: "ADDED", object: ROUND_TRIPS[0] as JsonMap },
      { type: "MODIFIED", object: ROUND_TRIPS[1] as JsonMap },
    ];
    const stream = Buffer.concat(events.map((event) => encodeWatchFrame(event)));
    expect(stream.readUInt32BE(0)).toBe(encodeWatchFrame(events[0] as (typeof events)[0]).length - 4);
    expect(decodeWatchFrames(stream)).toEqual(events);
  });

  it("records where its message definitions come from", () => {
    expect(Object.keys(PROTOBUF_SOURCE)).toEqual(["k8s.io/api@v0.36.3", "k8s.io/apimachinery@v0.36.3"]);
    for (const sum of Object.values(PROTOBUF_SOURCE)) expect(sum).toMatch(/^h1:[A-Za-z0-9+/]{43}=$/);
  });
});

describe("Go durations", () => {
  it.each([
    ["0s", 0],
    ["1h0m0s", 3600e9],
    ["1h30m0s", 5400e9],
    ["2m3s", 123e9],
    ["1.5s", 1.5e9],
    ["300ms", 300e6],
    ["20µs", 20e3],
    ["7ns", 7],
    ["-5s", -5e9],
  ])("%s is %d ns, both ways", (text, ns) => {
    expect(parseGoDuration(text)).toBe(ns);
    expect(formatGoDuration(ns)).toBe(text);
  });

  it("reads what Go reads and refuses the rest", () => {
    expect(parseGoDuration("90m")).toBe(5400e9);
    expect(parseGoDuration("1h1s")).toBe(3601e9);
    expect(parseGoDuration("1us")).toBe(1e3);
    expect(parseGoDuration("1d")).toBeNaN();
    expect(parseGoDuration("")).toBeNaN();
  });
});

// What Go's protobuf writes: every field of the message, zero or not (encodeObject writes only the
// fields the JSON has, so the zeros are given in the JSON here).
function encodeWithZeros(object: JsonMap): Uint8Array {
  return encodeObject(object);
}

function encodeUnknown(apiVersion: string, kind: string, raw: Uint8Array): Uint8Array {
  const root = protobuf.Root.fromJSON(descriptor.root as protobuf.INamespace);
  const unknown = root.lookupType("k8s.io.apimachinery.pkg.runtime.Unknown");
  const body = unknown.encode({ typeMeta: { apiVersion, kind }, raw }).finish();
  return Buffer.concat([Buffer.from([0x6b, 0x38, 0x73, 0x00]), body]);
}
