import { createHmac, timingSafeEqual } from "node:crypto";

/** A push notification's headers, lower-cased as Node gives them. */
export type Headers = Readonly<Record<string, string | string[] | undefined>>;

/** What to answer a webhook request, and whether it asks for a reconcile. */
export type WebhookVerdict =
  | { readonly status: 401 | 400; readonly message: string }
  | { readonly status: 200; readonly message: string; readonly trigger: false }
  | {
      readonly status: 202;
      readonly message: string;
      readonly trigger: true;
      readonly provider: Provider;
      readonly after: string;
    };

type Provider = "github" | "gitlab" | "gitea";

/**
 * Verifies a push webhook from GitHub (`X-Hub-Signature-256`, HMAC-SHA256), Gitea or Forgejo
 * (`X-Gitea-Signature` / `X-Forgejo-Signature`, HMAC-SHA256 in hex) or GitLab (`X-Gitlab-Token`, the
 * shared secret), in constant time, before reading anything in the body. A request without a valid
 * signature gets 401 and triggers nothing. A verified push to the source branch asks for a reconcile;
 * pushes to other branches (the status branch among them), tag pushes, branch deletions and pings
 * are acknowledged and ignored.
 */
export function judgeWebhook(
  headers: Headers,
  body: Buffer,
  secret: string,
  sourceBranch: string,
): WebhookVerdict {
  const provider = verify(headers, body, secret);
  if (!provider) return { status: 401, message: "missing or invalid webhook signature" };
  const event =
    header(headers, "x-github-event") ??
    header(headers, "x-gitea-event") ??
    header(headers, "x-forgejo-event") ??
    header(headers, "x-gitlab-event");
  if (event === "ping") return { status: 200, message: "pong", trigger: false };
  if (event !== "push" && event !== "Push Hook")
    return {
      status: 200,
      message: `ignored: ${event ?? "unnamed"} events do not change the fleet`,
      trigger: false,
    };
  let payload: { ref?: unknown; after?: unknown };
  try {
    payload = JSON.parse(body.toString("utf8")) as typeof payload;
  } catch {
    return { status: 400, message: "the push payload is not JSON" };
  }
  const wanted = `refs/heads/${sourceBranch}`;
  if (payload.ref !== wanted)
    return {
      status: 200,
      message: `ignored: a push to ${String(payload.ref)}, not ${wanted}`,
      trigger: false,
    };
  const after = typeof payload.after === "string" ? payload.after : "";
  if (/^0+$/.test(after))
    return { status: 200, message: "ignored: the source branch was deleted", trigger: false };
  return {
    status: 202,
    message: `reconciling ${sourceBranch} at ${after.slice(0, 7) || "its tip"}`,
    trigger: true,
    provider,
    after,
  };
}

function verify(headers: Headers, body: Buffer, secret: string): Provider | undefined {
  if (secret === "") return undefined;
  const gitea = header(headers, "x-gitea-signature") ?? header(headers, "x-forgejo-signature");
  if (gitea !== undefined) return sameText(gitea, hmac(secret, body)) ? "gitea" : undefined;
  const github = header(headers, "x-hub-signature-256");
  if (github !== undefined) return sameText(github, `sha256=${hmac(secret, body)}`) ? "github" : undefined;
  const gitlab = header(headers, "x-gitlab-token");
  if (gitlab !== undefined) return sameText(gitlab, secret) ? "gitlab" : undefined;
  return undefined;
}

function hmac(secret: string, body: Buffer): string {
  return createHmac("sha256", secret).update(body).digest("hex");
}

// Constant time whatever the inputs: both sides are hashed first, so lengths leak nothing either.
function sameText(given: string, expected: string): boolean {
  const digest = (text: string) => createHmac("sha256", "gitfleet-compare").update(text).digest();
  return timingSafeEqual(digest(given), digest(expected)) && given === expected;
}

function header(headers: Headers, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
