import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { type Headers, judgeWebhook } from "../../src/server/webhook.js";

const SECRET = "webhook-secret-for-tests";
const AFTER = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

function body(ref = "refs/heads/main", after = AFTER): Buffer {
  return Buffer.from(JSON.stringify({ ref, after, repository: { full_name: "platform/fleet" } }));
}
const hmac = (payload: Buffer, key = SECRET) => createHmac("sha256", key).update(payload).digest("hex");

// Headers as each forge sends them for a push, signed over the exact bytes of the body.
const github = (payload: Buffer, key = SECRET): Headers => ({
  "x-github-event": "push",
  "x-hub-signature-256": `sha256=${hmac(payload, key)}`,
});
const gitea = (payload: Buffer, key = SECRET): Headers => ({
  "x-gitea-event": "push",
  "x-gitea-signature": hmac(payload, key),
});
const forgejo = (payload: Buffer, key = SECRET): Headers => ({
  "x-forgejo-event": "push",
  "x-forgejo-signature": hmac(payload, key),
});
const gitlab = (_payload: Buffer, key = SECRET): Headers => ({
  "x-gitlab-event": "Push Hook",
  "x-gitlab-token": key,
});

describe("push webhooks", () => {
  it.each([
    ["GitHub", github, "github"],
    ["Gitea", gitea, "gitea"],
    ["Forgejo", forgejo, "gitea"],
    ["GitLab", gitlab, "gitlab"],
  ] as const)(
    "a %s push to the source branch, correctly signed, triggers a reconcile",
    (_name, sign, provider) => {
      const payload = body();
      expect(judgeWebhook(sign(payload), payload, SECRET, "main")).toEqual({
        status: 202,
        message: "reconciling main at 4b825dc",
        trigger: true,
        provider,
        after: AFTER,
      });
    },
  );

  it.each([
    ["GitHub, wrong key", github(body(), "other-secret"), body()],
    ["GitHub, body changed after signing", github(body()), body("refs/heads/evil")],
    ["GitHub, sha1-style header", { "x-github-event": "push", "x-hub-signature-256": hmac(body()) }, body()],
    ["Gitea, wrong key", gitea(body(), "other-secret"), body()],
    ["GitLab, wrong token", gitlab(body(), "other-secret"), body()],
    ["GitLab, token with a suffix", gitlab(body(), `${SECRET}x`), body()],
    ["no signature at all", { "x-github-event": "push" }, body()],
    ["an empty signature", { "x-github-event": "push", "x-hub-signature-256": "" }, body()],
  ])("%s: 401, nothing triggered", (_name, headers, payload) => {
    expect(judgeWebhook(headers, payload, SECRET, "main")).toEqual({
      status: 401,
      message: "missing or invalid webhook signature",
    });
  });

  it("refuses everything when no secret is configured", () => {
    expect(judgeWebhook(gitlab(body(), ""), body(), "", "main").status).toBe(401);
  });

  it.each([
    [
      "a push to another branch",
      body("refs/heads/feature"),
      "ignored: a push to refs/heads/feature, not refs/heads/main",
    ],
    [
      "gitfleet's own status branch",
      body("refs/heads/gitfleet/status"),
      "ignored: a push to refs/heads/gitfleet/status, not refs/heads/main",
    ],
    ["a tag", body("refs/tags/v1"), "ignored: a push to refs/tags/v1, not refs/heads/main"],
    ["the branch deleted", body("refs/heads/main", "0".repeat(40)), "ignored: the source branch was deleted"],
  ])("%s is acknowledged and ignored", (_name, payload, message) => {
    expect(judgeWebhook(github(payload), payload, SECRET, "main")).toEqual({
      status: 200,
      message,
      trigger: false,
    });
  });

  it("answers pings and other events without triggering, and rejects a signed body that is not JSON", () => {
    const ping = Buffer.from("{}");
    expect(judgeWebhook({ ...github(ping), "x-github-event": "ping" }, ping, SECRET, "main")).toMatchObject({
      status: 200,
      trigger: false,
    });
    expect(judgeWebhook({ ...github(ping), "x-github-event": "issues" }, ping, SECRET, "main")).toMatchObject(
      {
        status: 200,
        message: "ignored: issues events do not change the fleet",
      },
    );
    const junk = Buffer.from("not json");
    expect(judgeWebhook(github(junk), junk, SECRET, "main")).toEqual({
      status: 400,
      message: "the push payload is not JSON",
    });
  });
});
