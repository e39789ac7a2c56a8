import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { afterEach, describe, expect, it } from "vitest";
import { MemberApiError, MemberClient } from "../../src/kube/member-client.js";
import { startMember } from "../../src/sim/member-server.js";
import { gitfleetAsync } from "../helpers/cli.js";
import { BASE_SPEC, fleetFiles } from "../helpers/fleet-spec.js";
import { createRepo, tempDir } from "../helpers/git-repo.js";
import { HOSTILE_STATUS_MESSAGE, type HostileMember, startHostileMember } from "../helpers/hostile-member.js";
import { until, writeKubeconfig } from "../helpers/member.js";

/**
 * H3, L2, L3 (security audit): a hostile member could exhaust the controller — answers were read
 * without a size limit (4.3 GB in 10 s), a dripping answer's socket was never closed, redirects
 * were followed with the member's token, and its Status text went verbatim into commits. Every
 * answer is now bounded in size and time with the socket destroyed, redirects are refused, and
 * member text is one bounded line.
 */

const started: HostileMember[] = [];
afterEach(async () => {
  for (const member of started.splice(0)) await member.close();
});

async function hostile(mode: Parameters<typeof startHostileMember>[0], redirectTo?: string) {
  const member = await startHostileMember(mode, redirectTo);
  started.push(member);
  return member;
}

function clientFor(member: HostileMember, options: ConstructorParameters<typeof MemberClient>[2] = {}) {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: "c", server: member.url, skipTLSVerify: true }],
    users: [{ name: "u" }],
    contexts: [{ name: "west", cluster: "c", user: "u" }],
    currentContext: "west",
  });
  return new MemberClient("west", config, { retries: 0, ...options });
}

async function failure(promise: Promise<unknown>): Promise<MemberApiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(MemberApiError);
  return error as MemberApiError;
}

describe("H3: a hostile member cannot exhaust the controller", () => {
  it("an endless answer is cut at the size cap and its socket closed", async () => {
    const member = await hostile("huge");
    const before = process.memoryUsage().rss;
    const error = await failure(
      clientFor(member, { maxResponseBytes: 4 * 2 ** 20 }).get({
        apiVersion: "v1",
        kind: "ConfigMap",
        namespace: "x",
        name: "y",
      }),
    );
    expect(error.message).toBe("west did not answer: the answer is larger than 4 MiB");
    expect(process.memoryUsage().rss - before).toBeLessThan(256 * 2 ** 20);
    await until(() => (member.openSockets() === 0 ? true : undefined));
  });

  it("a gzip bomb is cut at the size cap once inflated", async () => {
    const member = await hostile("gzip-bomb");
    const error = await failure(clientFor(member, { maxResponseBytes: 2 ** 20 }).raw("GET", "/version"));
    expect(error.message).toBe("west did not answer: the answer is larger than 1 MiB");
  });

  it.each([["drip"], ["hang"]] as const)(
    "a %s answer times out as a whole and its socket is destroyed",
    async (mode) => {
      const member = await hostile(mode);
      const client = clientFor(member, { timeoutMs: 300 });
      for (let i = 0; i < 5; i++) {
        const error = await failure(client.raw("GET", "/readyz"));
        expect(error.message).toBe("west did not answer: no complete answer within 300 ms");
      }
      // Five timed-out requests leave no socket behind (the audit saw one leak per probe).
      await until(() => (member.openSockets() === 0 ? true : undefined));
    },
  );

  it("probes of a dripping member leave no sockets open", async () => {
    const member = await hostile("drip");
    const client = clientFor(member, { timeoutMs: 200 });
    for (let i = 0; i < 5; i++) expect((await client.probe()).outcome).toBe("unreachable");
    await until(() => (member.openSockets() === 0 ? true : undefined));
  });
});

describe("H3: through reconcile --once, with the other members simulated", () => {
  it("a streaming member is reported unreachable, the others sync, and the process exits", async () => {
    const { dir, cleanup } = tempDir("gitfleet-h3-");
    const members = await Promise.all(
      BASE_SPEC.clusters.filter((c) => c.name !== "west").map(({ name }) => startMember({ name })),
    );
    try {
      const west = await hostile("huge");
      mkdirSync(join(dir, "fleet"));
      createRepo(join(dir, "fleet"), fleetFiles(BASE_SPEC));
      const kubeconfig = writeKubeconfig(join(dir, "kubeconfig"), [
        ...members,
        { name: "west", url: west.url },
      ]);
      const before = Date.now();
      const result = await gitfleetAsync([
        "reconcile",
        "--repo",
        join(dir, "fleet"),
        "--once",
        "--log-level",
        "error",
        "--kubeconfig",
        kubeconfig,
      ]);
      expect(result.stdout).toMatch(
        /^ {2}west: not synced \(west did not answer: the answer is larger than 8 MiB\)$/m,
      );
      expect(result.stdout).toMatch(/^ {2}east: \d+ objects, \d+ created/m);
      expect(result.code).toBe(1);
      expect(Date.now() - before).toBeLessThan(120_000);
      await until(() => (west.openSockets() === 0 ? true : undefined));
    } finally {
      await Promise.all(members.map((m) => m.close()));
      cleanup();
    }
  });
});

describe("L3: redirects are refused, never followed with the member's credentials", () => {
  it("a 307 to another port gets an error; the target hears nothing", async () => {
    const target = await hostile("hang");
    const member = await hostile("redirect", target.url);
    const error = await failure(clientFor(member).raw("GET", "/api/v1/secrets"));
    expect(error.code).toBe(307);
    expect(error.message).toBe(
      "west answered with a redirect (307); gitfleet does not follow redirects from members",
    );
    expect(target.requests).toEqual([]);
  });
});

describe("L2: member text is one bounded line", () => {
  it("a Status with paragraphs, fake trailers and markup becomes one line", async () => {
    const member = await hostile("status-text");
    const error = await failure(clientFor(member).raw("GET", "/api/v1/namespaces"));
    expect(error.message).not.toContain("\n");
    expect(error.message).toBe(HOSTILE_STATUS_MESSAGE.replace(/\s+/g, " "));
    expect(error.reason).toBe("Evil Reason");
  });

  it("a long Status message is cut", async () => {
    const member = await hostile("status-text");
    const client = clientFor(member);
    const error = await failure(client.raw("GET", "/x"));
    expect(error.message.length).toBeLessThanOrEqual(300);
  });
});
