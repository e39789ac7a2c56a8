import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";

// Server-side apply of a built-in kind refuses a top-level field the kind's schema does not declare,
// with kube-apiserver's words (the second tier found gitfleet sending one the simulator let through).

let member: SimulatedMember;
beforeAll(async () => {
  member = await startMember({ name: "apply-schema" });
});
afterAll(async () => {
  await member.close();
});

const apply = (path: string, body: unknown) =>
  fetch(`${member.url}${path}?fieldManager=test`, {
    method: "PATCH",
    headers: { "content-type": "application/apply-patch+yaml" },
    body: JSON.stringify(body),
  });

describe("server-side apply against the kind's schema", () => {
  it("refuses an undeclared top-level field of a built-in kind", async () => {
    await apply("/api/v1/namespaces/gitfleet-system", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "gitfleet-system" },
    });
    const response = await apply("/api/v1/namespaces/gitfleet-system/configmaps/hooks", {
      apiVersion: "v1",
      kind: "ConfigMap",
      name: "hooks",
      metadata: { name: "hooks", namespace: "gitfleet-system" },
      data: { a: "1" },
    });
    expect(response.status).toBe(500);
    const status = (await response.json()) as Record<string, unknown>;
    // kube-apiserver gives this Status no reason.
    expect(status.reason).toBeUndefined();
    expect(status).toMatchObject({
      message:
        "failed to create typed patch object (gitfleet-system/hooks; /v1, Kind=ConfigMap): .name: field not declared in schema",
    });
  });

  it("takes every declared field", async () => {
    const response = await apply("/api/v1/namespaces/gitfleet-system/secrets/s", {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "s", namespace: "gitfleet-system" },
      type: "Opaque",
      immutable: false,
      stringData: { password: "not-a-real-password" },
    });
    expect(response.status).toBe(201);
  });
});
