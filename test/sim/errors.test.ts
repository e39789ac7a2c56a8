import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { customResourceDefinition } from "../helpers/crd.js";
import { memberRequest } from "../helpers/member.js";

/** Error answers over raw HTTP, each a Status object as a real API server sends it. */
let member: SimulatedMember;
beforeAll(async () => {
  member = await startMember({ name: "east" });
  await fetch(`${member.url}/api/v1/namespaces/default/configmaps`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ metadata: { name: "cm" }, data: { a: "1" } }),
  });
  const crd = customResourceDefinition({ group: "example.com", kind: "Widget", plural: "widgets" });
  for (const [path, body] of [
    ["/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd],
    [
      "/apis/example.com/v1/namespaces/default/widgets",
      { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w" } },
    ],
  ] as const)
    await fetch(`${member.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
});
afterAll(() => member.close());

const call = (method: string, path: string, body?: unknown, contentType?: string) =>
  memberRequest(member.url, method, path, body, contentType);

describe("error answers", () => {
  it.each([
    [
      "an unknown patch type",
      "PATCH",
      "/api/v1/namespaces/default/configmaps/cm",
      { data: {} },
      "application/x-unknown",
      415,
      "UnsupportedMediaType",
    ],
    [
      "a strategic merge patch on a custom resource",
      "PATCH",
      "/apis/example.com/v1/namespaces/default/widgets/w",
      { spec: {} },
      "application/strategic-merge-patch+json",
      415,
      "UnsupportedMediaType",
    ],
    [
      "a missing object",
      "GET",
      "/apis/apps/v1/namespaces/default/deployments/none",
      undefined,
      "application/json",
      404,
      "NotFound",
    ],
    [
      "an object without a name",
      "POST",
      "/api/v1/namespaces/default/configmaps",
      { metadata: {} },
      "application/json",
      422,
      "Invalid",
    ],
    [
      "a body that is not JSON",
      "POST",
      "/api/v1/namespaces/default/configmaps",
      "{nope",
      "application/json",
      400,
      "BadRequest",
    ],
    [
      "a kind that does not match the URL",
      "POST",
      "/api/v1/namespaces/default/configmaps",
      { kind: "Secret", metadata: { name: "x" } },
      "application/json",
      400,
      "BadRequest",
    ],
    [
      "a resource the server does not serve",
      "GET",
      "/apis/example.com/v1/gadgets",
      undefined,
      "application/json",
      404,
      "NotFound",
    ],
    [
      "a stale resourceVersion",
      "PUT",
      "/api/v1/namespaces/default/configmaps/cm",
      { metadata: { name: "cm", resourceVersion: "1" } },
      "application/json",
      409,
      "Conflict",
    ],
    [
      "an apply without a field manager",
      "PATCH",
      "/api/v1/namespaces/default/configmaps/cm",
      "data: {a: '2'}",
      "application/apply-patch+yaml",
      400,
      "BadRequest",
    ],
    [
      "a JSON patch whose path does not exist",
      "PATCH",
      "/api/v1/namespaces/default/configmaps/cm",
      [{ op: "replace", path: "/spec/x", value: 1 }],
      "application/json-patch+json",
      422,
      "Invalid",
    ],
  ])("%s: %s %s", async (_name, method, path, body, contentType, code, reason) => {
    const answer = await call(method, path, body, contentType);
    expect(answer.status).toBe(code);
    expect(answer.body).toMatchObject({ kind: "Status", code, reason });
  });
});
