import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { memberRequest } from "../helpers/member.js";

/**
 * pods/eviction as kube-apiserver answers it (kubectl drain's path): the pod deleted, unless a
 * PodDisruptionBudget selecting it allows no disruption (429), or more than one selects it (500).
 */
let member: SimulatedMember;
beforeEach(async () => {
  member = await startMember({ name: "east" });
});
afterEach(() => member.close());

const call = (method: string, path: string, body?: unknown, contentType?: string) =>
  memberRequest(member.url, method, path, body, contentType);

// A pod of app=web, Ready or not, or ended.
async function pod(name: string, state: "Ready" | "NotReady" | "Succeeded") {
  await call("POST", "/api/v1/namespaces/default/pods", {
    metadata: { name, labels: { app: "web" } },
    spec: { nodeName: "n-1", containers: [{ name: "c", image: "nginx" }] },
  });
  await call("PUT", `/api/v1/namespaces/default/pods/${name}/status`, {
    metadata: { name, labels: { app: "web" } },
    spec: { nodeName: "n-1", containers: [{ name: "c", image: "nginx" }] },
    status:
      state === "Succeeded"
        ? { phase: "Succeeded" }
        : { phase: "Running", conditions: [{ type: "Ready", status: state === "Ready" ? "True" : "False" }] },
  });
}

async function budget(name: string, spec: Record<string, unknown>) {
  await call("POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets", {
    metadata: { name },
    spec: { selector: { matchLabels: { app: "web" } }, ...spec },
  });
}

const evict = (name: string) =>
  call("POST", `/api/v1/namespaces/default/pods/${name}/eviction`, {
    apiVersion: "policy/v1",
    kind: "Eviction",
    metadata: { name, namespace: "default" },
  });

const exists = async (name: string) =>
  (await call("GET", `/api/v1/namespaces/default/pods/${name}`)).status === 200;

describe("pods/eviction", () => {
  it.each<[string, Record<string, unknown> | undefined, ("Ready" | "NotReady")[], number]>([
    ["no budget", undefined, ["Ready"], 201],
    ["minAvailable 1 of one Ready pod", { minAvailable: 1 }, ["Ready"], 429],
    ["minAvailable 1 of two Ready pods", { minAvailable: 1 }, ["Ready", "Ready"], 201],
    ["minAvailable 1 of one Ready, one not", { minAvailable: 1 }, ["Ready", "NotReady"], 429],
    ["minAvailable 2 of three Ready pods", { minAvailable: 2 }, ["Ready", "Ready", "Ready"], 201],
    ["minAvailable 50% of two (one needed) Ready", { minAvailable: "50%" }, ["Ready", "Ready"], 201],
    ["minAvailable 51% of two (rounded up: two)", { minAvailable: "51%" }, ["Ready", "Ready"], 429],
    ["maxUnavailable 0", { maxUnavailable: 0 }, ["Ready", "Ready"], 429],
    ["maxUnavailable 1 of two Ready", { maxUnavailable: 1 }, ["Ready", "Ready"], 201],
    ["maxUnavailable 1 of two, one not Ready", { maxUnavailable: 1 }, ["Ready", "NotReady"], 429],
  ])("evicts under %s only when the budget allows", async (_name, spec, states, status) => {
    for (const [i, state] of states.entries()) await pod(`p-${i}`, state);
    if (spec) await budget("web", spec);
    const answer = await evict("p-0");
    expect(answer.status).toBe(status);
    expect(await exists("p-0")).toBe(status !== 201);
    if (status === 429) {
      expect(answer.body).toMatchObject({ kind: "Status", reason: "TooManyRequests", code: 429 });
      expect(JSON.stringify(answer.body)).toContain("The disruption budget web needs");
    } else expect(answer.body).toMatchObject({ kind: "Status", status: "Success", code: 201 });
  });

  it("deletes a pod that has ended whatever its budget says", async () => {
    await pod("done", "Succeeded");
    await budget("web", { minAvailable: 5 });
    expect((await evict("done")).status).toBe(201);
    expect(await exists("done")).toBe(false);
  });

  it("refuses a pod two budgets select, an Eviction naming another pod, and a GET", async () => {
    await pod("p", "Ready");
    await pod("q", "Ready");
    expect(
      (await call("POST", "/api/v1/namespaces/default/pods/p/eviction", { metadata: { name: "q" } })).status,
    ).toBe(400);
    expect((await call("GET", "/api/v1/namespaces/default/pods/p/eviction")).status).toBe(405);
    expect((await call("POST", "/api/v1/namespaces/default/pods/nope/eviction", {})).status).toBe(404);
    await budget("a", { maxUnavailable: 5 });
    await budget("b", { maxUnavailable: 5 });
    const twice = await evict("p");
    expect(twice.status).toBe(500);
    expect(String(twice.body.message)).toContain("more than one PodDisruptionBudget");
    expect(await exists("p")).toBe(true);
  });
});
