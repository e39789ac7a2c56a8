import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JsonMap } from "../../src/apimachinery/json.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { decodeObject, decodeWatchFrames, encodeObject } from "../../src/sim/protobuf/kube-protobuf.js";

/** A simulated member speaking protobuf over HTTP, as client-go's typed clients ask for it. */
let member: SimulatedMember;
beforeAll(async () => {
  member = await startMember({ name: "east" });
});
afterAll(() => member.close());

const PROTOBUF = "application/vnd.kubernetes.protobuf";

async function request(
  path: string,
  init: { method?: string; body?: Uint8Array; accept?: string; type?: string },
) {
  const response = await fetch(`${member.url}${path}`, {
    method: init.method ?? "GET",
    headers: {
      accept: init.accept ?? `${PROTOBUF},application/json`,
      ...(init.body ? { "content-type": init.type ?? PROTOBUF } : {}),
    },
    ...(init.body ? { body: init.body } : {}),
  });
  return {
    status: response.status,
    type: response.headers.get("content-type"),
    bytes: new Uint8Array(await response.arrayBuffer()),
  };
}

const configMap: JsonMap = {
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "settings", namespace: "default" },
  data: { mode: "fast" },
};

describe("protobuf over HTTP", () => {
  it("takes a protobuf create and answers in protobuf when asked first", async () => {
    const created = await request("/api/v1/namespaces/default/configmaps", {
      method: "POST",
      body: encodeObject(configMap),
    });
    expect(created).toMatchObject({ status: 201, type: PROTOBUF });
    expect(decodeObject(created.bytes)).toMatchObject({
      ...configMap,
      metadata: { name: "settings", uid: expect.any(String) },
    });
    // JSON first in Accept: JSON back.
    const json = await request("/api/v1/namespaces/default/configmaps/settings", {
      accept: `application/json,${PROTOBUF}`,
    });
    expect(json.type).toBe("application/json");
    expect(JSON.parse(Buffer.from(json.bytes).toString("utf8"))).toMatchObject({ data: { mode: "fast" } });
  });

  it("answers lists and errors in protobuf", async () => {
    const list = await request("/api/v1/namespaces/default/configmaps", {});
    expect(list.type).toBe(PROTOBUF);
    const decoded = decodeObject(list.bytes);
    expect(decoded).toMatchObject({
      apiVersion: "v1",
      kind: "ConfigMapList",
      items: [{ metadata: { name: "settings" } }],
    });
    const missing = await request("/apis/apps/v1/namespaces/default/deployments/none", {});
    expect(missing).toMatchObject({ status: 404, type: PROTOBUF });
    expect(decodeObject(missing.bytes)).toMatchObject({ kind: "Status", reason: "NotFound", code: 404 });
  });

  it("refuses a protobuf body of a kind it has no message for with 415, and malformed bytes", async () => {
    const custom = encodeObject(configMap);
    // The same bytes relabelled as a custom resource: no message definition.
    const relabelled = Buffer.from(custom).toString("latin1").replace("ConfigMap", "Widgets!!");
    const refused = await request("/api/v1/namespaces/default/configmaps", {
      method: "POST",
      body: Buffer.from(relabelled, "latin1"),
      accept: "application/json",
    });
    expect(refused.status).toBe(415);
    expect(JSON.parse(Buffer.from(refused.bytes).toString("utf8"))).toMatchObject({
      reason: "UnsupportedMediaType",
    });
    const garbage = await request("/api/v1/namespaces/default/configmaps", {
      method: "POST",
      body: Buffer.from("not protobuf"),
      accept: "application/json",
    });
    expect(garbage.status).toBe(415);
  });

  it("streams a watch as length-delimited protobuf frames", async () => {
    const controller = new AbortController();
    const response = await fetch(
      `${member.url}/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1`,
      {
        headers: { accept: PROTOBUF },
        signal: controller.signal,
      },
    );
    expect(response.headers.get("content-type")).toBe(`${PROTOBUF};stream=watch`);
    const events = decodeWatchFrames(new Uint8Array(await response.arrayBuffer()));
    expect(events).toEqual([
      { type: "ADDED", object: expect.objectContaining({ kind: "ConfigMap", data: { mode: "fast" } }) },
    ]);
  });
});
