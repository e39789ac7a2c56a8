import { ForgeError, type ForgeHttp, forgeRequest } from "./forge-http.js";

/** The forges gitfleet speaks to: their REST APIs differ in paths, states and pagination. */
export const FORGE_KINDS = ["github", "gitlab", "gitea"] as const;
export type ForgeKind = (typeof FORGE_KINDS)[number];

export type StatusState = "pending" | "success" | "failure" | "error";

/** A commit status: the check a forge shows beside a commit and on its pull request. */
export interface CommitStatus {
  readonly sha: string;
  readonly state: StatusState;
  /** The status's name ("gitfleet/reconcile"); a status with the same name replaces the last one. */
  readonly context: string;
  readonly description: string;
  readonly targetUrl?: string;
}

export interface ForgeComment {
  readonly id: string;
  readonly body: string;
}

/** One repository on a forge: its commit statuses and its pull requests' comments. */
export interface Forge {
  readonly kind: ForgeKind;
  /** owner/name (GitLab: the project's full path). */
  readonly repo: string;
  setStatus(status: CommitStatus): Promise<void>;
  comments(pullRequest: number): Promise<ForgeComment[]>;
  createComment(pullRequest: number, body: string): Promise<string>;
  editComment(pullRequest: number, id: string, body: string): Promise<void>;
}

export interface ForgeOptions {
  readonly kind: ForgeKind;
  readonly apiUrl: string;
  readonly repo: string;
  /** The token, asked before each request (a rotated Secret is used next time). */
  readonly token: () => Promise<string | undefined>;
  readonly attempts?: number;
  readonly backoffMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
}

/** Pages of a hundred comments read at most, looking for gitfleet's (10,000 comments). */
const MAX_PAGES = 100;
/** GitHub cuts a status description at 140 characters; the others take that too. */
const MAX_DESCRIPTION = 140;

export function openForge(options: ForgeOptions): Forge {
  checkRepo(options.kind, options.repo);
  const http: ForgeHttp = {
    apiUrl: options.apiUrl,
    auth: async () => {
      const token = await options.token();
      if (token === undefined) return {};
      if (/[\r\n]/.test(token)) throw new ForgeError("the forge token may not contain a line break");
      return { authorization: options.kind === "gitea" ? `token ${token}` : `Bearer ${token}` };
    },
    ...(options.attempts ? { attempts: options.attempts } : {}),
    ...(options.backoffMs !== undefined ? { backoffMs: options.backoffMs } : {}),
    ...(options.sleep ? { sleep: options.sleep } : {}),
  };
  return options.kind === "gitlab"
    ? gitLab(http, options.repo)
    : gitHubOrGitea(http, options.kind, options.repo);
}

// GitHub (/repos/o/r/…) and Gitea (/repos/o/r/… under /api/v1) share their shape; Gitea answers an
// issue's comments in one list, GitHub by pages.
function gitHubOrGitea(http: ForgeHttp, kind: "github" | "gitea", repo: string): Forge {
  const base = `/repos/${repo.split("/").map(encodeURIComponent).join("/")}`;
  return {
    kind,
    repo,
    setStatus: async (status) => {
      await forgeRequest(http, "POST", `${base}/statuses/${checkSha(status.sha)}`, {
        state: status.state,
        context: status.context,
        description: description(status.description),
        ...(status.targetUrl ? { target_url: status.targetUrl } : {}),
      });
    },
    comments: async (pr) => {
      const path = `${base}/issues/${checkNumber(pr)}/comments`;
      if (kind === "gitea") return commentList((await forgeRequest(http, "GET", path)).json, "id", "body");
      return paged((page) => forgeRequest(http, "GET", `${path}?per_page=100&page=${page}`), "id", "body");
    },
    createComment: async (pr, body) =>
      commentId(
        (await forgeRequest(http, "POST", `${base}/issues/${checkNumber(pr)}/comments`, { body })).json,
      ),
    editComment: async (_pr, id, body) => {
      await forgeRequest(http, "PATCH", `${base}/issues/comments/${checkId(id)}`, { body });
    },
  };
}

// GitLab: a project by its URL-encoded path, merge requests' notes, and its own status states.
function gitLab(http: ForgeHttp, repo: string): Forge {
  const base = `/projects/${encodeURIComponent(repo)}`;
  const states: Record<StatusState, string> = {
    pending: "pending",
    success: "success",
    failure: "failed",
    error: "failed",
  };
  return {
    kind: "gitlab",
    repo,
    setStatus: async (status) => {
      try {
        await forgeRequest(http, "POST", `${base}/statuses/${checkSha(status.sha)}`, {
          state: states[status.state],
          name: status.context,
          description: description(status.description),
          ...(status.targetUrl ? { target_url: status.targetUrl } : {}),
        });
      } catch (error) {
        // GitLab refuses to set a status to the state it already has; that is what was asked.
        if (
          !(
            error instanceof ForgeError &&
            error.status === 400 &&
            /Cannot transition status/.test(error.message)
          )
        )
          throw error;
      }
    },
    comments: (mr) =>
      paged(
        (page) =>
          forgeRequest(
            http,
            "GET",
            `${base}/merge_requests/${checkNumber(mr)}/notes?per_page=100&page=${page}&sort=asc`,
          ),
        "id",
        "body",
      ),
    createComment: async (mr, body) =>
      commentId(
        (await forgeRequest(http, "POST", `${base}/merge_requests/${checkNumber(mr)}/notes`, { body })).json,
      ),
    editComment: async (mr, id, body) => {
      await forgeRequest(http, "PUT", `${base}/merge_requests/${checkNumber(mr)}/notes/${checkId(id)}`, {
        body,
      });
    },
  };
}

async function paged(
  page: (n: number) => ReturnType<typeof forgeRequest>,
  idKey: string,
  bodyKey: string,
): Promise<ForgeComment[]> {
  const all: ForgeComment[] = [];
  for (let n = 1; n <= MAX_PAGES; n++) {
    const answer = await page(n);
    const comments = commentList(answer.json, idKey, bodyKey);
    all.push(...comments);
    if (!Array.isArray(answer.json) || answer.json.length < 100) break;
  }
  return all;
}

function commentList(json: unknown, idKey: string, bodyKey: string): ForgeComment[] {
  if (!Array.isArray(json)) throw new ForgeError("the forge answered a comment list that is not a list");
  return json.flatMap((item: unknown) => {
    const record = (item ?? {}) as Record<string, unknown>;
    const id = record[idKey];
    const body = record[bodyKey];
    return (typeof id === "number" || typeof id === "string") && typeof body === "string"
      ? [{ id: String(id), body }]
      : [];
  });
}

function commentId(json: unknown): string {
  const id = ((json ?? {}) as { id?: unknown }).id;
  if (typeof id !== "number" && typeof id !== "string")
    throw new ForgeError("the forge answered a comment without an id");
  return String(id);
}

function description(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length <= MAX_DESCRIPTION ? line : `${line.slice(0, MAX_DESCRIPTION - 1)}…`;
}

function checkRepo(kind: ForgeKind, repo: string): void {
  const segment = "[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}";
  const shape =
    kind === "gitlab" ? new RegExp(`^${segment}(/${segment}){1,20}$`) : new RegExp(`^${segment}/${segment}$`);
  if (!shape.test(repo) || repo.split("/").some((part) => part === "." || part === ".."))
    throw new ForgeError(
      `"${repo.slice(0, 200)}" is not a ${kind} repository (${kind === "gitlab" ? "group/…/project" : "owner/name"})`,
    );
}

function checkSha(sha: string): string {
  if (!/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(sha))
    throw new ForgeError(`"${sha.slice(0, 80)}" is not a commit id`);
  return sha;
}

function checkNumber(n: number): number {
  if (!Number.isSafeInteger(n) || n < 1) throw new ForgeError(`${n} is not a pull request number`);
  return n;
}

function checkId(id: string): string {
  if (!/^\d{1,20}$/.test(id)) throw new ForgeError(`"${id.slice(0, 40)}" is not a comment id`);
  return id;
}
