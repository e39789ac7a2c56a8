import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_DATA_BYTES } from "../../src/sim/api/data-size.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { memberRequest } from "../helpers/member.js";

/** ConfigMaps and Secrets over 1 MiB are refused as kube-apiserver refuses them, on every write path. */
let member: SimulatedMember;
beforeAll(async () => {
  member = await startMember({ name: "east" });
});
afterAll(() => member.close());

const call = (method: string, path: string, body?: unknown, contentType?: string) =>
  memberRequest(member.url, method, path, body, contentType);

const CM = "/api/v1/namespaces/default/configmaps";
const SECRETS = "/api/v1/namespaces/default/secrets";
const text = (n: number) => "x".repeat(n);
const base64Of = (n: number) => Buffer.alloc(n, 1).toString("base64");

describe("the 1 MiB bound of ConfigMaps and Secrets", () => {
  it.each<[string, Record<string, unknown>, number]>([
    ["data at exactly 1 MiB", { data: { a: text(MAX_DATA_BYTES) } }, 201],
    ["data one byte over", { data: { a: text(MAX_DATA_BYTES + 1) } }, 422],
    [
      "data over across two keys",
      { data: { a: text(MAX_DATA_BYTES / 2), b: text(MAX_DATA_BYTES / 2 + 1) } },
      422,
    ],
    [
      "data and binaryData together at exactly 1 MiB",
      { data: { a: text(1024) }, binaryData: { b: base64Of(MAX_DATA_BYTES - 1024) } },
      201,
    ],
    ["binaryData one decoded byte over", { binaryData: { b: base64Of(MAX_DATA_BYTES + 1) } }, 422],
  ])("a ConfigMap with %s", async (name, fields, status) => {
    const answer = await call("POST", CM, {
      metadata: { name: name.replace(/[^a-z0-9]+/g, "-") },
      ...fields,
    });
    expect(answer.status).toBe(status);
    if (status === 422)
      expect(answer.body.message).toMatch(
        /^ConfigMap ".*" is invalid: \[\]: Too long: may not be more than 1048576 bytes$/,
      );
  });

  it.each<[string, Record<string, unknown>, number]>([
    ["data decoded at exactly 1 MiB", { data: { a: base64Of(MAX_DATA_BYTES) } }, 201],
    ["data decoded one byte over", { data: { a: base64Of(MAX_DATA_BYTES + 1) } }, 422],
    ["stringData one byte over", { stringData: { a: text(MAX_DATA_BYTES + 1) } }, 422],
  ])("a Secret with %s", async (name, fields, status) => {
    const answer = await call("POST", SECRETS, {
      metadata: { name: name.replace(/[^a-z0-9]+/g, "-") },
      ...fields,
    });
    expect(answer.status).toBe(status);
    if (status === 422)
      expect(answer.body.message).toContain("data: Too long: may not be more than 1048576 bytes");
  });

  it("refuses an update, a patch and a server-side apply that grow a ConfigMap past it, and keeps the stored one", async () => {
    expect((await call("POST", CM, { metadata: { name: "grows" }, data: { a: "small" } })).status).toBe(201);
    const big = { a: text(MAX_DATA_BYTES + 1) };
    expect((await call("PUT", `${CM}/grows`, { metadata: { name: "grows" }, data: big })).status).toBe(422);
    expect((await call("PATCH", `${CM}/grows`, { data: big }, "application/merge-patch+json")).status).toBe(
      422,
    );
    const applied = await call(
      "PATCH",
      `${CM}/grows?fieldManager=t&force=true`,
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "grows" }, data: big },
      "application/apply-patch+yaml",
    );
    expect(applied.status).toBe(422);
    const stored = await fetch(`${member.url}${CM}/grows`).then(
      (r) => r.json() as Promise<{ data: unknown }>,
    );
    expect(stored.data).toEqual({ a: "small" });
  });
});
