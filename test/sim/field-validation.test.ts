import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asList, asMap, type JsonMap } from "../../src/apimachinery/json.js";
import { goValue } from "../../src/sim/api/field-validation.js";
import { duplicateJsonFields, duplicateYamlFields } from "../../src/sim/duplicate-fields.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { memberRequest, until } from "../helpers/member.js";

// fieldValidation over HTTP, as kube-apiserver answers it (the answers below are a real server's,
// test/e2e/kubectl-parity.e2e.ts compares the two): a field the kind does not declare, or one given
// twice, is dropped, and Strict refuses it, Warn (the default) warns, Ignore says nothing. And a dry
// run leaves the simulated world alone: no controller makes what a dry-run Deployment would.

let member: SimulatedMember;
beforeAll(async () => {
  member = await startMember({ name: "east", world: { readyDelayMs: 20 } });
  await call("POST", "/api/v1/namespaces", { metadata: { name: "shop" } });
});
afterAll(() => member.close());

const NS = "/api/v1/namespaces/shop";
const DEPLOYMENTS = "/apis/apps/v1/namespaces/shop/deployments";

const call = (method: string, path: string, body?: unknown, contentType?: string) =>
  memberRequest(member.url, method, path, body, contentType);

const UNKNOWN = (name: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, bogus: 1 },
  data: { v: "1" },
  extra: { a: 1 },
});
const TWO_UNKNOWN = 'unknown field "metadata.bogus", unknown field "extra"';
const WARNED = '299 - "unknown field \\"metadata.bogus\\"", 299 - "unknown field \\"extra\\""';

describe("fieldValidation on a create", () => {
  it.each([
    ["absent (Warn)", "", 201, WARNED],
    ["Warn", "?fieldValidation=Warn", 201, WARNED],
    ["Ignore", "?fieldValidation=Ignore", 201, null],
  ])("%s: drops what ConfigMap does not declare", async (_, query, status, warning) => {
    const name = `cm-${query.length}`;
    const answer = await call("POST", `${NS}/configmaps${query}`, UNKNOWN(name));
    expect([answer.status, answer.warning]).toEqual([status, warning]);
    expect(answer.body).not.toHaveProperty("extra");
    expect(asMap(answer.body.metadata)).not.toHaveProperty("bogus");
    const kept = (await call("GET", `${NS}/configmaps/${name}`)).body;
    expect(kept).toMatchObject({ data: { v: "1" } });
    expect(kept).not.toHaveProperty("extra");
  });

  it("Strict: refuses it with 400 and stores nothing", async () => {
    const answer = await call("POST", `${NS}/configmaps?fieldValidation=Strict`, UNKNOWN("strict"));
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: `ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: ${TWO_UNKNOWN}`,
      reason: "BadRequest",
      code: 400,
    });
    expect((await call("GET", `${NS}/configmaps/strict`)).status).toBe(404);
  });

  it("names a nested field by its path, list items by index", async () => {
    const body = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "nested" },
      spec: {
        replicas: 1,
        replica: 2,
        selector: { matchLabels: { a: "b" } },
        template: {
          metadata: { labels: { a: "b" } },
          spec: { containers: [{ name: "c", image: "x", imagee: "y" }] },
        },
      },
    };
    const answer = await call("POST", `${DEPLOYMENTS}?fieldValidation=Strict&dryRun=All`, body);
    expect(answer.body.message).toBe(
      'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.replica", unknown field "spec.template.spec.containers[0].imagee"',
    );
  });

  it("takes the last of a field given twice: Strict refuses it, Warn warns", async () => {
    const text = (name: string) =>
      `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}"},"data":{"v":"1","v":"2"}}`;
    const strict = await call("POST", `${NS}/configmaps?fieldValidation=Strict`, text("twice-strict"));
    expect([strict.status, strict.body.message]).toEqual([
      400,
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: duplicate field "data.v"',
    ]);
    const warned = await call("POST", `${NS}/configmaps`, text("twice"));
    expect([warned.status, warned.warning, warned.body.data]).toEqual([
      201,
      '299 - "duplicate field \\"data.v\\""',
      { v: "2" },
    ]);
  });

  it("refuses a fieldValidation it does not know with 422", async () => {
    const answer = await call("POST", `${NS}/configmaps?fieldValidation=Nope`, UNKNOWN("nope"));
    expect([answer.status, answer.body.message]).toEqual([
      422,
      'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Nope": supported values: "", "Ignore", "Strict", "Warn"',
    ]);
  });
});

describe("fieldValidation on a replace and a patch", () => {
  beforeAll(async () => {
    await call("POST", `${NS}/configmaps`, { metadata: { name: "target" }, data: { v: "1" } });
    await call("POST", DEPLOYMENTS, {
      metadata: { name: "web" },
      spec: {
        replicas: 1,
        selector: { matchLabels: { a: "b" } },
        template: { metadata: { labels: { a: "b" } }, spec: { containers: [{ name: "c", image: "x" }] } },
      },
    });
  });

  it("refuses an unknown field of a replace under Strict, and drops it with a warning otherwise", async () => {
    const strict = await call("PUT", `${NS}/configmaps/target?fieldValidation=Strict`, UNKNOWN("target"));
    expect([strict.status, strict.body.message]).toEqual([
      400,
      `ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: ${TWO_UNKNOWN}`,
    ]);
    const warned = await call("PUT", `${NS}/configmaps/target`, UNKNOWN("target"));
    expect([warned.status, warned.warning]).toEqual([200, WARNED]);
    expect(warned.body).not.toHaveProperty("extra");
  });

  it("refuses a strategic merge patch's unknown field as Go prints the patch", async () => {
    const patch = { spec: { replicaz: 3 } };
    const strict = await call(
      "PATCH",
      `${DEPLOYMENTS}/web?fieldValidation=Strict`,
      patch,
      "application/strategic-merge-patch+json",
    );
    const message =
      'Invalid value: "map[spec:map[replicaz:3]]": strict decoding error: unknown field "spec.replicaz"';
    expect([strict.status, strict.body.message, strict.body.details]).toEqual([
      422,
      ` "" is invalid: patch: ${message}`,
      { causes: [{ reason: "FieldValueInvalid", message, field: "patch" }] },
    ]);
    const warned = await call("PATCH", `${DEPLOYMENTS}/web`, patch, "application/strategic-merge-patch+json");
    expect([warned.status, warned.warning]).toEqual([200, '299 - "unknown field \\"spec.replicaz\\""']);
    expect(asMap(warned.body.spec)).not.toHaveProperty("replicaz");
  });

  it("refuses a merge patch's unknown field showing the object it made", async () => {
    const strict = await call(
      "PATCH",
      `${DEPLOYMENTS}/web?fieldValidation=Strict`,
      { spec: { replicaz: 3 } },
      "application/merge-patch+json",
    );
    expect(strict.status).toBe(422);
    expect(String(strict.body.message)).toMatch(
      /^ "" is invalid: patch: Invalid value: "\{\\"apiVersion\\":\\"apps\/v1\\".*\\"replicaz\\":3.*": strict decoding error: unknown field "spec\.replicaz"$/,
    );
  });
});

describe("a dry run and the simulated world", () => {
  it("makes no ReplicaSet, pod or event for a dry-run Deployment, while a real one gets all three", async () => {
    const deployment = (name: string) => ({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "c", image: "x" }] } },
      },
    });
    expect((await call("POST", `${DEPLOYMENTS}?dryRun=All`, deployment("ghost"))).status).toBe(201);
    expect((await call("POST", DEPLOYMENTS, deployment("real"))).status).toBe(201);
    // The world handles changes in order: once the real one's pods run, the dry run's would have.
    await until(async () => {
      const pods = asList((await call("GET", `${NS}/pods?labelSelector=app%3Dreal`)).body.items);
      return pods.length === 2 ? true : undefined;
    }, 10_000);
    const named = async (path: string, prefix: string) =>
      asList((await call("GET", path)).body.items).filter((o) =>
        String(asMap(asMap(o).metadata).name).startsWith(prefix),
      );
    expect(await named("/apis/apps/v1/namespaces/shop/replicasets", "ghost")).toEqual([]);
    expect(await named(`${NS}/pods`, "ghost")).toEqual([]);
    expect((await named(`${NS}/events`, "ghost")).length).toBe(0);
    expect((await named(`${NS}/events`, "real")).length).toBeGreaterThan(0);
    expect((await call("GET", `${DEPLOYMENTS}/ghost`)).status).toBe(404);
  });
});

describe("finding fields given twice", () => {
  it.each([
    ['{"a":1,"a":2}', ["a"]],
    ['{"a":{"b":1,"c":{"b":2},"b":3}}', ["a.b"]],
    ['{"l":[{"n":1},{"n":1,"n":2}]}', ["l[1].n"]],
    ['{"s":"a\\"b","s":"x","t":["{","}"],"t":1}', ["s", "t"]],
    ['{"a":[[{"x":1,"x":1}]]}', ["a[0][0].x"]],
    ['{"a\\u0062":1,"ab":2}', ["ab"]],
    ['{"k\\\\":1,"k\\\\":2,"q":"\\\\"}', ["k\\"]],
    ["[]", []],
  ])("in JSON %s", (text, found) => {
    expect(duplicateJsonFields(text)).toEqual(found);
  });

  it("in JSON nested twenty thousand deep, without running out of stack", () => {
    const deep = `${'{"a":'.repeat(20_000)}1${"}".repeat(20_000)}`;
    expect(duplicateJsonFields(`{"x":1,"x":2,"d":${deep}}`)).toEqual(["x"]);
  });

  it("in YAML", () => {
    expect(duplicateYamlFields("a: 1\nb:\n  c: 1\n  c: 2\nl:\n  - n: 1\n    n: 2\na: 3\n")).toEqual([
      "b.c",
      "l[0].n",
      "a",
    ]);
  });
});

describe("Go's %v of a decoded patch", () => {
  it.each([
    [{ spec: { replicas: 3 } }, "map[spec:map[replicas:3]]"],
    [{ b: [1, "x", null, true], a: 1.5 }, "map[a:1.5 b:[1 x <nil> true]]"],
    [{ n: 100000 }, "map[n:100000]"],
    [{ n: 999999 }, "map[n:999999]"],
    [{ n: 1000000 }, "map[n:1e+06]"],
    [{ n: 1500000 }, "map[n:1.5e+06]"],
    [{ n: 0.0001 }, "map[n:0.0001]"],
    [{ n: 0.00001 }, "map[n:1e-05]"],
    [{ n: -2 }, "map[n:-2]"],
    [{ n: 0 }, "map[n:0]"],
  ])("%j → %s", (value, printed) => {
    expect(goValue(value as JsonMap)).toBe(printed);
  });
});
