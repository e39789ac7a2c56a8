import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { openForge } from "../../src/forge/forge.js";
import { forgeTarget } from "../../src/forge/forge-target.js";
import { planMarker, upsertPlanComment } from "../../src/forge/plan-comment.js";
import { ForgeContract } from "../helpers/forge-contract.js";

const TOKEN = "forge-test-token-7c1d";
const SHA = "a".repeat(40);
const contracts: ForgeContract[] = [];
afterEach(async () => {
  await Promise.all(contracts.splice(0).map((c) => c.close()));
});

const KINDS = [
  { kind: "github", repo: "acme/fleet", prefix: "/repos/acme/fleet", verb: "PATCH" },
  { kind: "gitea", repo: "acme/fleet", prefix: "/repos/acme/fleet", verb: "PATCH" },
  { kind: "gitlab", repo: "acme/platform/fleet", prefix: "/projects/acme%2Fplatform%2Ffleet", verb: "PUT" },
] as const;

async function forgeOn(kind: "github" | "gitlab" | "gitea", repo: string, token = TOKEN) {
  const contract = await ForgeContract.start(kind, TOKEN);
  contracts.push(contract);
  const slept: number[] = [];
  const forge = openForge({
    kind,
    apiUrl: contract.url,
    repo,
    token: async () => token,
    sleep: async (ms) => {
      slept.push(ms);
    },
  });
  return { contract, forge, slept };
}

describe.each(KINDS)("the $kind client", ({ kind, repo, prefix, verb }) => {
  it("posts a commit status in the forge's own words, with the token in its header", async () => {
    const { contract, forge } = await forgeOn(kind, repo);
    await forge.setStatus({
      sha: SHA,
      state: "failure",
      context: "gitfleet/plan",
      description: `invalid: ${"x".repeat(300)}`,
      targetUrl: "https://fleet.example.com/#/commits/abc",
    });
    const [request] = contract.requests;
    expect(request?.method).toBe("POST");
    expect(request?.path).toBe(`${prefix}/statuses/${SHA}`);
    expect(request?.auth).toBe(kind === "gitea" ? `token ${TOKEN}` : `Bearer ${TOKEN}`);
    const body = contract.statuses.get(SHA)?.[0] ?? {};
    expect(body[kind === "gitlab" ? "name" : "context"]).toBe("gitfleet/plan");
    expect(body.state).toBe(kind === "gitlab" ? "failed" : "failure");
    expect(body.target_url).toBe("https://fleet.example.com/#/commits/abc");
    expect(String(body.description).length).toBe(140);
  });

  it("keeps one plan comment, edited in place, among a hundred and more others", async () => {
    const { contract, forge } = await forgeOn(kind, repo);
    // 130 comments by people first: the marked one is on the second page where the forge pages.
    contract.comments.set(
      7,
      Array.from({ length: 130 }, (_, i) => ({ id: i + 1, body: `review ${i}` })),
    );
    const first = await upsertPlanComment(forge, 7, "gitfleet/plan", "### plan one");
    const second = await upsertPlanComment(forge, 7, "gitfleet/plan", "### plan two");
    const third = await upsertPlanComment(forge, 7, "gitfleet/plan", "### plan three");
    expect(first.created).toBe(true);
    expect([second, third]).toEqual([
      { id: first.id, created: false },
      { id: first.id, created: false },
    ]);
    const marked = (contract.comments.get(7) ?? []).filter((c) =>
      c.body.startsWith(planMarker("gitfleet/plan")),
    );
    expect(marked.map((c) => c.body)).toEqual([`${planMarker("gitfleet/plan")}\n### plan three`]);
    expect(contract.requests.filter((r) => r.method === verb)).toHaveLength(2);
    // Another fleet's plan on the same pull request is its own comment.
    await upsertPlanComment(forge, 7, "gitfleet/plan-staging", "### staging");
    expect(contract.comments.get(7)).toHaveLength(132);
  });

  it("retries rate limits and server errors with backoff, honouring Retry-After", async () => {
    const { contract, forge, slept } = await forgeOn(kind, repo);
    contract.faults.push({ status: 502 }, { status: 429, headers: { "retry-after": "3" } }, { status: 503 });
    await forge.setStatus({ sha: SHA, state: "success", context: "c", description: "ok" });
    expect(contract.statuses.get(SHA)).toHaveLength(1);
    expect(slept).toHaveLength(3);
    expect(slept[1]).toBeGreaterThanOrEqual(3000);
    expect(slept[0]).toBeLessThan(slept[2] as number);
  });

  it("answers a refusal at once, naming the path and the forge's message, never the token", async () => {
    const { contract, forge, slept } = await forgeOn(kind, repo, "wrong-token-secret-9f2e");
    const error = await forge
      .setStatus({ sha: SHA, state: "pending", context: "c", description: "d" })
      .catch((e: Error) => e.message);
    expect(error).toBe(`POST ${prefix}/statuses/${SHA} answered HTTP 401: Bad credentials`);
    expect(error).not.toContain("wrong-token");
    expect(contract.requests).toHaveLength(1);
    expect(slept).toEqual([]);
  });

  it("gives up after its attempts when the forge stays down", async () => {
    const { contract, forge, slept } = await forgeOn(kind, repo);
    contract.faults.push(...Array.from({ length: 5 }, () => ({ status: 500 })));
    const error = await forge.comments(3).catch((e: Error) => e.message);
    expect(error).toMatch(/answered HTTP 500/);
    expect(contract.requests).toHaveLength(5);
    expect(slept).toHaveLength(4);
  });
});

describe("the forge client's refusals", () => {
  it("treats GitHub's 403 with no requests remaining as a rate limit, and a plain 403 as final", async () => {
    const { contract, forge, slept } = await forgeOn("github", "acme/fleet");
    contract.faults.push({ status: 403, headers: { "x-ratelimit-remaining": "0" } });
    await forge.setStatus({ sha: SHA, state: "success", context: "c", description: "d" });
    expect(slept).toHaveLength(1);
    contract.faults.push({ status: 403, body: { message: "Resource not accessible by integration" } });
    const error = await forge
      .setStatus({ sha: SHA, state: "success", context: "c", description: "d" })
      .catch((e: Error) => e.message);
    expect(error).toMatch(/HTTP 403: Resource not accessible by integration$/);
    expect(slept).toHaveLength(1);
  });

  it("follows no redirect, so the token never goes to another host", async () => {
    let reached = 0;
    const elsewhere = createServer((_req, res) => {
      reached++;
      res.end("{}");
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, "127.0.0.1", resolve));
    const target = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/`;
    const redirecting = createServer((_req, res) => {
      res.writeHead(307, { location: target });
      res.end();
    });
    await new Promise<void>((resolve) => redirecting.listen(0, "127.0.0.1", resolve));
    const forge = openForge({
      kind: "github",
      apiUrl: `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}`,
      repo: "acme/fleet",
      token: async () => TOKEN,
      attempts: 1,
    });
    const error = await forge
      .setStatus({ sha: SHA, state: "success", context: "c", description: "d" })
      .catch((e: Error) => e.message);
    expect(error).toMatch(/cannot reach/);
    expect(reached).toBe(0);
    await new Promise((resolve) => elsewhere.close(resolve));
    await new Promise((resolve) => redirecting.close(resolve));
  });

  it.each([
    { repo: "../etc", kind: "github" },
    { repo: "acme/fleet/extra", kind: "github" },
    { repo: "acme", kind: "gitlab" },
    { repo: "acme/-rf", kind: "gitea" },
  ] as const)("refuses $repo as a $kind repository", ({ repo, kind }) => {
    expect(() =>
      openForge({ kind, apiUrl: "https://forge.example.com", repo, token: async () => TOKEN }),
    ).toThrow(/is not a .* repository/);
  });

  it("refuses what is no commit id, pull request or comment id before any request", async () => {
    const { contract, forge } = await forgeOn("github", "acme/fleet");
    await expect(
      forge.setStatus({ sha: "main", state: "success", context: "c", description: "d" }),
    ).rejects.toThrow(/is not a commit id/);
    await expect(forge.comments(0)).rejects.toThrow(/is not a pull request number/);
    await expect(forge.editComment(1, "1/../../x", "b")).rejects.toThrow(/is not a comment id/);
    expect(contract.requests).toEqual([]);
  });
});

describe("forgeTarget", () => {
  it.each([
    {
      input: { repoUrl: "https://github.com/acme/fleet.git" },
      kind: "github",
      apiUrl: "https://api.github.com",
      repo: "acme/fleet",
    },
    {
      input: { repoUrl: "git@github.com:acme/fleet.git" },
      kind: "github",
      apiUrl: "https://api.github.com",
      repo: "acme/fleet",
    },
    {
      input: { repoUrl: "https://gitlab-ci-token:hidden@gitlab.com/acme/platform/fleet.git" },
      kind: "gitlab",
      apiUrl: "https://gitlab.com/api/v4",
      repo: "acme/platform/fleet",
    },
    {
      input: { repoUrl: "ssh://git@git.acme.io:2222/acme/fleet.git", kind: "gitea" },
      kind: "gitea",
      apiUrl: "https://git.acme.io:2222/api/v1",
      repo: "acme/fleet",
    },
    {
      input: { repoUrl: "https://ghe.acme.io/acme/fleet", kind: "github" },
      kind: "github",
      apiUrl: "https://ghe.acme.io/api/v3",
      repo: "acme/fleet",
    },
    {
      input: { kind: "forgejo", apiUrl: "https://code.acme.io/api/v1/", repo: "acme/fleet" },
      kind: "gitea",
      apiUrl: "https://code.acme.io/api/v1",
      repo: "acme/fleet",
    },
  ] as const)("reads $input", ({ input, kind, apiUrl, repo }) => {
    expect(forgeTarget(input)).toEqual({ kind, apiUrl, repo });
  });

  it.each([
    [
      { repoUrl: "https://git.acme.io/acme/fleet.git" },
      /cannot be told from its host: say github, gitlab or gitea/,
    ],
    [{ kind: "bitbucket", repo: "a/b", apiUrl: "https://x" }, /unknown forge "bitbucket"/],
    [{ kind: "github", repo: "a/b", apiUrl: "file:///etc/passwd" }, /must be http\(s\)/],
    [{ kind: "github", repo: "a/b", apiUrl: "https://user:pw@api.example.com" }, /may not carry credentials/],
    [{ kind: "github", apiUrl: "https://api.github.com" }, /repository is not known/],
  ])("refuses %o", (input, error) => {
    expect(() => forgeTarget(input)).toThrow(error);
  });
});
