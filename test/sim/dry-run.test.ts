import { describe, expect, it } from "vitest";
import { asMap, type JsonMap } from "../../src/apimachinery/json.js";
import { MemberApi } from "../../src/sim/member-api.js";
import { customResourceDefinition } from "../helpers/crd.js";

// `dryRun=All` on every mutating verb of the simulated API: each request runs on two members in the
// same state, one for real and one as a dry run. The dry run answers what the real request answered
// (but for the resourceVersion, which a dry run never takes), and its member is left as it was:
// the same objects, the same resourceVersion, no watch event.

interface Call {
  readonly method: string;
  readonly path: string;
  readonly body?: unknown;
  readonly contentType?: string;
  readonly query?: Record<string, string>;
}

const NS = "/api/v1/namespaces/shop";
const DEPLOYMENTS = "/apis/apps/v1/namespaces/shop/deployments";
const CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const MERGE = "application/merge-patch+json";
const APPLY = "application/apply-patch+yaml";

const deployment = (name: string, replicas = 2): JsonMap => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, labels: { app: name } },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: "main", image: "registry.example.com/web:1" }] },
    },
  },
});
const configMap = (name: string, data: Record<string, string>, extra: JsonMap = {}): JsonMap => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, ...extra },
  data,
});

// What every member holds before each call.
const SETUP: readonly Call[] = [
  { method: "POST", path: "/api/v1/namespaces", body: { metadata: { name: "shop" } } },
  {
    method: "POST",
    path: `${NS}/configmaps`,
    body: configMap("settings", { mode: "fast" }),
    query: { fieldManager: "kubectl" },
  },
  {
    method: "POST",
    path: `${NS}/configmaps`,
    body: configMap("held", { a: "1" }, { finalizers: ["example.com/hold"] }),
  },
  {
    method: "POST",
    path: `${NS}/configmaps`,
    body: configMap("tmp-1", { a: "1" }, { labels: { tier: "tmp" } }),
  },
  {
    method: "POST",
    path: `${NS}/configmaps`,
    body: configMap("tmp-2", { a: "2" }, { labels: { tier: "tmp" } }),
  },
  { method: "POST", path: DEPLOYMENTS, body: deployment("web"), query: { fieldManager: "kubectl" } },
  {
    method: "POST",
    path: `${NS}/pods`,
    body: {
      metadata: { name: "solo" },
      spec: { containers: [{ name: "main", image: "registry.example.com/solo:1" }] },
    },
  },
];

const widgetCrd = customResourceDefinition({ group: "example.com", kind: "Widget", plural: "widgets" });

// One request per verb and subresource, with the answer's kind of resourceVersion: a new object has
// none in a dry run, a changed one keeps its stored version.
const CASES: readonly (readonly [string, Call, "new" | "stored" | "none"])[] = [
  [
    "create a ConfigMap",
    { method: "POST", path: `${NS}/configmaps`, body: configMap("new", { a: "1" }) },
    "new",
  ],
  [
    "create a Namespace",
    { method: "POST", path: "/api/v1/namespaces", body: { metadata: { name: "dry" } } },
    "new",
  ],
  ["create a Deployment, defaulted", { method: "POST", path: DEPLOYMENTS, body: deployment("api") }, "new"],
  [
    "create a NodePort Service, its address and port allocated",
    {
      method: "POST",
      path: `${NS}/services`,
      body: { metadata: { name: "edge" }, spec: { type: "NodePort", ports: [{ port: 80 }] } },
    },
    "new",
  ],
  [
    "create what exists",
    { method: "POST", path: `${NS}/configmaps`, body: configMap("settings", {}) },
    "none",
  ],
  [
    "create in a namespace that does not exist",
    { method: "POST", path: "/api/v1/namespaces/none/configmaps", body: configMap("x", {}) },
    "none",
  ],
  ["create a CRD", { method: "POST", path: CRDS, body: widgetCrd }, "new"],
  [
    "replace a ConfigMap",
    {
      method: "PUT",
      path: `${NS}/configmaps/settings`,
      body: configMap("settings", { mode: "slow" }),
      query: { fieldManager: "kubectl" },
    },
    "stored",
  ],
  [
    "replace with a stale resourceVersion",
    {
      method: "PUT",
      path: `${NS}/configmaps/settings`,
      body: configMap("settings", { mode: "slow" }, { resourceVersion: "1" }),
    },
    "none",
  ],
  [
    "replace a Deployment's scale",
    {
      method: "PUT",
      path: `${DEPLOYMENTS}/web/scale`,
      body: {
        apiVersion: "autoscaling/v1",
        kind: "Scale",
        metadata: { name: "web", namespace: "shop" },
        spec: { replicas: 4 },
      },
    },
    "stored",
  ],
  [
    "merge-patch a Deployment's spec",
    { method: "PATCH", path: `${DEPLOYMENTS}/web`, body: { spec: { replicas: 5 } }, contentType: MERGE },
    "stored",
  ],
  [
    "JSON-patch a ConfigMap",
    {
      method: "PATCH",
      path: `${NS}/configmaps/settings`,
      body: [{ op: "replace", path: "/data/mode", value: "slow" }],
      contentType: "application/json-patch+json",
    },
    "stored",
  ],
  [
    "strategic-merge-patch a Deployment's template",
    {
      method: "PATCH",
      path: `${DEPLOYMENTS}/web`,
      body: {
        spec: { template: { spec: { containers: [{ name: "main", image: "registry.example.com/web:2" }] } } },
      },
      contentType: "application/strategic-merge-patch+json",
    },
    "stored",
  ],
  [
    "patch a Deployment's scale",
    {
      method: "PATCH",
      path: `${DEPLOYMENTS}/web/scale`,
      body: { spec: { replicas: 1 } },
      contentType: MERGE,
    },
    "stored",
  ],
  [
    "patch a Deployment's status",
    {
      method: "PATCH",
      path: `${DEPLOYMENTS}/web/status`,
      body: { status: { observedGeneration: 7 } },
      contentType: MERGE,
    },
    "stored",
  ],
  [
    "server-side apply a new ConfigMap",
    {
      method: "PATCH",
      path: `${NS}/configmaps/applied`,
      body: configMap("applied", { v: "1" }),
      contentType: APPLY,
      query: { fieldManager: "flux" },
    },
    "new",
  ],
  [
    "server-side apply a change another manager's field conflicts with",
    {
      method: "PATCH",
      path: `${NS}/configmaps/settings`,
      body: configMap("settings", { mode: "slow" }),
      contentType: APPLY,
      query: { fieldManager: "flux" },
    },
    "none",
  ],
  [
    "server-side apply it with force",
    {
      method: "PATCH",
      path: `${NS}/configmaps/settings`,
      body: configMap("settings", { mode: "slow" }),
      contentType: APPLY,
      query: { fieldManager: "flux", force: "true" },
    },
    "stored",
  ],
  ["delete a ConfigMap", { method: "DELETE", path: `${NS}/configmaps/settings` }, "none"],
  ["delete one a finalizer holds: marked", { method: "DELETE", path: `${NS}/configmaps/held` }, "stored"],
  ["delete a Namespace and what is in it", { method: "DELETE", path: "/api/v1/namespaces/shop" }, "none"],
  ["delete what does not exist", { method: "DELETE", path: `${NS}/configmaps/none` }, "none"],
  [
    "delete with a uid precondition that fails",
    { method: "DELETE", path: `${NS}/configmaps/settings`, body: { preconditions: { uid: "not-its-uid" } } },
    "none",
  ],
  [
    "delete a collection by label",
    { method: "DELETE", path: `${NS}/configmaps`, query: { labelSelector: "tier=tmp" } },
    "none",
  ],
  [
    "evict a pod",
    {
      method: "POST",
      path: `${NS}/pods/solo/eviction`,
      body: { apiVersion: "policy/v1", kind: "Eviction", metadata: { name: "solo" } },
    },
    "none",
  ],
];

function request(api: MemberApi, call: Call, extra: Record<string, string> = {}) {
  const query = new URLSearchParams({ ...call.query, ...extra });
  return api.handle({
    method: call.method,
    path: call.path,
    query,
    contentType: call.contentType ?? "application/json",
    body: call.body,
  });
}

function member(): MemberApi {
  const api = new MemberApi("east", {}, () => new Date("2026-12-07T01:00:00Z"));
  for (const call of SETUP) expect(request(api, call).status, call.path).toBeLessThan(300);
  return api;
}

// Every object of every resource served, and the version the store is at.
function snapshot(api: MemberApi): string {
  const objects = api.resources().map((r) => [r.group, r.name, api.store.list(r, undefined)]);
  return JSON.stringify({
    version: api.store.currentVersion(),
    objects,
    served: api.resources().map((r) => r.name),
  });
}

// What differs between two members by nature: uids (in messages too) and versions.
function comparable(body: unknown): unknown {
  return JSON.parse(
    JSON.stringify(body, (key, value: unknown) =>
      key === "uid" || key === "resourceVersion" ? undefined : value,
    ).replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "UID"),
  );
}

describe("dryRun=All on the simulated API", () => {
  it.each(CASES)("%s: answers as the real request, stores nothing, tells no watcher", (_, call, version) => {
    const real = member();
    const dry = member();
    const before = snapshot(dry);
    const stored = request(dry, { method: "GET", path: call.path.replace(/\/(eviction)$/, "") });
    const heard: unknown[] = [];
    const watch = dry.store.watch(Number(dry.store.currentVersion()), (event) => heard.push(event));
    const done = request(real, call);
    const tried = request(dry, call, { dryRun: "All" });
    watch?.stop();
    expect(tried.status).toBe(done.status);
    expect(comparable(tried.body)).toEqual(comparable(done.body));
    expect(snapshot(dry)).toBe(before);
    expect(heard).toEqual([]);
    const metadata = asMap(asMap(tried.body).metadata);
    if (version === "new") expect(metadata).not.toHaveProperty("resourceVersion");
    if (version === "stored")
      expect(metadata.resourceVersion).toBe(asMap(asMap(stored.body).metadata).resourceVersion);
  });

  it("takes dryRun from a delete's DeleteOptions as from its query", () => {
    const dry = member();
    const before = snapshot(dry);
    const answer = request(dry, {
      method: "DELETE",
      path: `${NS}/configmaps/settings`,
      body: { kind: "DeleteOptions", apiVersion: "v1", dryRun: ["All"] },
    });
    expect(answer.status).toBe(200);
    expect(snapshot(dry)).toBe(before);
  });

  it("serves no resource a dry-run CRD would add, and keeps one a dry-run delete would remove", () => {
    const api = member();
    expect(request(api, { method: "POST", path: CRDS, body: widgetCrd }, { dryRun: "All" }).status).toBe(201);
    expect(request(api, { method: "GET", path: "/apis/example.com/v1/namespaces/shop/widgets" }).status).toBe(
      404,
    );
    expect(request(api, { method: "POST", path: CRDS, body: widgetCrd }).status).toBe(201);
    const crd = `${CRDS}/widgets.example.com`;
    expect(request(api, { method: "DELETE", path: crd }, { dryRun: "All" }).status).toBe(200);
    expect(request(api, { method: "GET", path: "/apis/example.com/v1/namespaces/shop/widgets" }).status).toBe(
      200,
    );
  });

  it.each([
    ["POST", "CreateOptions", `${NS}/configmaps`],
    ["PUT", "UpdateOptions", `${NS}/configmaps/settings`],
    ["PATCH", "PatchOptions", `${NS}/configmaps/settings`],
    ["DELETE", "DeleteOptions", `${NS}/configmaps/settings`],
  ])("refuses a dryRun other than All on %s with 422, naming %s", (method, kind, path) => {
    for (const values of [["Nope"], [""], ["All", "all"]]) {
      const api = member();
      const before = snapshot(api);
      const query = new URLSearchParams(values.map((v): [string, string] => ["dryRun", v]));
      const answer = api.handle({
        method,
        path,
        query,
        contentType: method === "PATCH" ? MERGE : "application/json",
        body:
          method === "DELETE"
            ? undefined
            : method === "PATCH"
              ? { data: { mode: "slow" } }
              : configMap("settings", {}),
      });
      expect(answer.status).toBe(422);
      const listed = values.map((v) => JSON.stringify(v)).join(",");
      expect(answer.body).toEqual({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: `${kind}.meta.k8s.io "" is invalid: dryRun: Unsupported value: [${listed}]: supported values: "All"`,
        reason: "Invalid",
        details: {
          group: "meta.k8s.io",
          kind,
          causes: [
            {
              reason: "FieldValueNotSupported",
              message: `Unsupported value: [${listed}]: supported values: "All"`,
              field: "dryRun",
            },
          ],
        },
        code: 422,
      });
      expect(snapshot(api)).toBe(before);
    }
  });

  it("takes dryRun given twice as All", () => {
    const api = member();
    const before = snapshot(api);
    const answer = api.handle({
      method: "POST",
      path: `${NS}/configmaps`,
      query: new URLSearchParams([
        ["dryRun", "All"],
        ["dryRun", "All"],
      ]),
      contentType: "application/json",
      body: configMap("twice", {}),
    });
    expect(answer.status).toBe(201);
    expect(snapshot(api)).toBe(before);
  });
});
