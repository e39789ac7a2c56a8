import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asList, asMap, type Json, type JsonMap } from "../../src/apimachinery/json.js";
import { MemberApiError, MemberClient } from "../../src/kube/member-client.js";
import { memberClientConfig } from "../../src/sim/kubeconfig.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { type ControlPlanes, startControlPlanes } from "./cluster/control-plane.js";

/**
 * The simulated member against the ground truth: the same requests to a real kube-apiserver and to
 * a simulated member, and the answers compared once what differs by nature (uids, times, resource
 * versions) is taken out. Where they differed, the simulator was fixed (with a test of its own).
 */

const BUILD = fileURLToPath(new URL("./cluster/build.sh", import.meta.url));
let planes: ControlPlanes;
let member: SimulatedMember;
let real: MemberClient;
let simulated: MemberClient;

beforeAll(async () => {
  const binDir = execFileSync("bash", [BUILD], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] })
    .trim()
    .split("\n")
    .pop() as string;
  // The API server alone: no controller may touch the objects between two requests.
  planes = await startControlPlanes({ binDir, names: ["truth"], controllers: false });
  const config = new k8s.KubeConfig();
  config.loadFromFile(planes.kubeconfig);
  real = new MemberClient("truth", config, { retries: 0 });
  member = await startMember({ name: "sim" });
  simulated = new MemberClient("sim", memberClientConfig(member), { retries: 0 });
}, 900_000);

afterAll(async () => {
  await member?.close();
  await planes?.stop();
});

type Step = (c: MemberClient, ns: string) => Promise<unknown>;

/** What a step answered: the object (normalized), or the error's code, reason and message. */
async function outcome(step: Step, c: MemberClient, ns: string): Promise<Json> {
  try {
    return normalize((await step(c, ns)) as Json, ns);
  } catch (error) {
    if (!(error instanceof MemberApiError)) throw error;
    return {
      code: error.code,
      reason: error.reason,
      message: error.message
        .replace(/^[^:]*: /, "")
        .replaceAll(ns, "NS")
        .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "UID"),
    };
  }
}

const VOLATILE = new Set([
  "uid",
  "resourceVersion",
  "creationTimestamp",
  "time",
  "lastTransitionTime",
  "selfLink",
]);

// managedFields entries are compared as a set: their order is not part of what gitfleet reads.
function normalize(value: Json, ns: string): Json {
  if (Array.isArray(value)) {
    const items = value.map((v) => normalize(v, ns));
    const entries = items.every(
      (i) => i !== null && typeof i === "object" && !Array.isArray(i) && "manager" in i,
    );
    return entries ? [...items].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))) : items;
  }
  if (value && typeof value === "object") {
    const out: JsonMap = {};
    for (const [k, v] of Object.entries(value)) if (!VOLATILE.has(k)) out[k] = normalize(v as Json, ns);
    return out;
  }
  return typeof value === "string" ? value.replaceAll(ns, "NS") : value;
}

// An object without its managedFields' fieldsV1 (who wrote stays): see the Deployment case.
function withoutFields(object: unknown): Json {
  const map = asMap(object as Json);
  const metadata = asMap(map.metadata);
  const managedFields = asList(metadata.managedFields).map((m) => {
    const { fieldsV1: _, ...rest } = asMap(m);
    return rest;
  });
  return { ...map, metadata: { ...metadata, managedFields } };
}

const apply = (c: MemberClient, body: JsonMap, manager: string, force = false) =>
  c.raw(
    "PATCH",
    `/api/v1/namespaces/${String(asMap(body.metadata).namespace)}/configmaps/${String(asMap(body.metadata).name)}?fieldManager=${manager}${force ? "&force=true" : ""}`,
    body,
    "application/apply-patch+yaml",
  );
const cm = (ns: string, data: JsonMap, name = "cfg"): JsonMap => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: ns },
  data,
});

let counter = 0;
async function namespace(c: MemberClient): Promise<string> {
  const ns = `parity-${process.pid}-${++counter}`;
  await c.raw("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  return ns;
}

const CASES: [string, Step[]][] = [
  [
    "an apply of nothing but a name",
    [
      async (c) => {
        const name = `bare-${process.pid}-${++counter}`;
        const created = asMap(
          await c.raw(
            "PATCH",
            `/api/v1/namespaces/${name}?fieldManager=alpha`,
            { apiVersion: "v1", kind: "Namespace", metadata: { name } },
            "application/apply-patch+yaml",
          ),
        );
        return asMap(created.metadata).managedFields ?? null;
      },
    ],
  ],
  [
    "server-side apply records the manager's fields",
    [
      async (c, ns) =>
        asMap(asMap(await apply(c, cm(ns, { a: "1", b: "2" }), "alpha")).metadata).managedFields,
    ],
  ],
  [
    "a second manager changing an owned field without force is a 409 naming the manager and the field",
    [(c, ns) => apply(c, cm(ns, { a: "1" }), "alpha"), (c, ns) => apply(c, cm(ns, { a: "2" }), "beta")],
  ],
  [
    "the same value from a second manager is shared ownership",
    [
      (c, ns) => apply(c, cm(ns, { a: "1" }), "alpha"),
      async (c, ns) => asMap(asMap(await apply(c, cm(ns, { a: "1" }), "beta")).metadata).managedFields,
    ],
  ],
  [
    "a field the only manager stops applying is removed",
    [
      (c, ns) => apply(c, cm(ns, { a: "1", b: "2" }), "alpha"),
      async (c, ns) => asMap(await apply(c, cm(ns, { a: "1" }), "alpha")).data,
    ],
  ],
  [
    "a merge patch that sets managedFields replaces them",
    [
      (c, ns) => apply(c, cm(ns, { a: "1" }), "alpha"),
      (c, ns) =>
        c.raw(
          "PATCH",
          `/api/v1/namespaces/${ns}/configmaps/cfg?fieldManager=kubectl-edit`,
          { data: { b: "2" } },
          "application/merge-patch+json",
        ),
      async (c, ns) => {
        const live = asMap(await c.raw("GET", `/api/v1/namespaces/${ns}/configmaps/cfg`));
        const kept = asList(asMap(live.metadata).managedFields).filter(
          (m) => asMap(m).manager !== "kubectl-edit",
        );
        const patched = await c.raw(
          "PATCH",
          `/api/v1/namespaces/${ns}/configmaps/cfg?fieldManager=gitfleet-adopt`,
          { metadata: { managedFields: kept } },
          "application/merge-patch+json",
        );
        return asList(asMap(asMap(patched).metadata).managedFields).map((m) => asMap(m).manager);
      },
    ],
  ],
  [
    "a delete whose uid precondition does not match is a 409",
    [
      (c, ns) => apply(c, cm(ns, { a: "1" }), "alpha"),
      (c, ns) =>
        c.raw("DELETE", `/api/v1/namespaces/${ns}/configmaps/cfg`, {
          apiVersion: "v1",
          kind: "DeleteOptions",
          preconditions: { uid: "00000000-0000-0000-0000-000000000000" },
        }),
    ],
  ],
  [
    "creating in a namespace that does not exist is a 404",
    [
      (c) =>
        c.raw("POST", "/api/v1/namespaces/no-such-namespace/configmaps", cm("no-such-namespace", { a: "1" })),
    ],
  ],
  [
    "a spec change bumps a Deployment's generation, a label change does not",
    [
      async (c, ns) =>
        withoutFields(
          await c.raw("POST", `/apis/apps/v1/namespaces/${ns}/deployments`, {
            apiVersion: "apps/v1",
            kind: "Deployment",
            metadata: { name: "d", namespace: ns },
            spec: {
              replicas: 1,
              selector: { matchLabels: { app: "d" } },
              template: {
                metadata: { labels: { app: "d" } },
                spec: { containers: [{ name: "c", image: "i:1" }] },
              },
            },
          }),
        ),
      async (c, ns) =>
        withoutFields(
          await c.raw(
            "PATCH",
            `/apis/apps/v1/namespaces/${ns}/deployments/d`,
            { metadata: { labels: { x: "y" } } },
            "application/merge-patch+json",
          ),
        ),
      async (c, ns) => {
        const scaled = asMap(
          await c.raw(
            "PATCH",
            `/apis/apps/v1/namespaces/${ns}/deployments/d`,
            { spec: { replicas: 2 } },
            "application/merge-patch+json",
          ),
        );
        // The spec with the server's defaults, the generation, and who wrote (not the exact fieldsV1:
        // see the README on what a member does not do).
        const managers = asList(asMap(scaled.metadata).managedFields).map((m) => {
          const { manager, operation, subresource } = asMap(m);
          return { manager, operation, subresource: subresource ?? "" };
        });
        return { spec: scaled.spec, generation: asMap(scaled.metadata).generation, managers } as Json;
      },
    ],
  ],
];

describe("the simulated member answers as a real API server does", () => {
  it.each(CASES)("%s", async (_name, steps) => {
    const answers: Record<string, Json[]> = {};
    for (const [side, c] of [
      ["real", real],
      ["simulated", simulated],
    ] as const) {
      const ns = await namespace(c);
      answers[side] = [];
      for (const step of steps) answers[side].push(await outcome(step, c, ns));
    }
    expect(answers.simulated).toEqual(answers.real);
  });
});
