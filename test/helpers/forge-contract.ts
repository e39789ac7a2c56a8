import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A request the contract server took: method, path (with query), Authorization and JSON body. */
export interface TakenRequest {
  readonly method: string;
  readonly path: string;
  readonly auth: string | undefined;
  readonly body: Record<string, unknown>;
}

/** A canned answer served instead of the contract's, once per request, in order. */
export interface Fault {
  readonly status: number;
  readonly headers?: Record<string, string>;
  readonly body?: unknown;
}

type Kind = "github" | "gitlab" | "gitea";
type Answer = [number, unknown];

// Each forge's paths: a commit's statuses, a pull request's comments, one comment (and its edit verb).
const PATHS: Record<Kind, { status: RegExp; list: RegExp; one: RegExp; edit: string }> = {
  github: {
    status: /^\/repos\/[^/]+\/[^/]+\/statuses\/([0-9a-f]+)$/,
    list: /^\/repos\/[^/]+\/[^/]+\/issues\/(\d+)\/comments$/,
    one: /^\/repos\/[^/]+\/[^/]+\/issues\/comments\/(\d+)$/,
    edit: "PATCH",
  },
  gitea: {
    status: /^\/repos\/[^/]+\/[^/]+\/statuses\/([0-9a-f]+)$/,
    list: /^\/repos\/[^/]+\/[^/]+\/issues\/(\d+)\/comments$/,
    one: /^\/repos\/[^/]+\/[^/]+\/issues\/comments\/(\d+)$/,
    edit: "PATCH",
  },
  gitlab: {
    status: /^\/projects\/[^/]+\/statuses\/([0-9a-f]+)$/,
    list: /^\/projects\/[^/]+\/merge_requests\/(\d+)\/notes$/,
    one: /^\/projects\/[^/]+\/merge_requests\/\d+\/notes\/(\d+)$/,
    edit: "PUT",
  },
};

/**
 * A loopback server keeping the REST contract of GitHub's, GitLab's or Gitea's statuses and
 * issue/merge-request comments: the paths, methods, bodies and pagination each documents (GitHub
 * and GitLab pages of per_page, Gitea's whole list), comment ids it assigns, and 401 without the
 * expected token. `faults` answer before the contract does, to test retries.
 */
export class ForgeContract {
  readonly requests: TakenRequest[] = [];
  readonly faults: Fault[] = [];
  readonly statuses = new Map<string, Record<string, unknown>[]>();
  readonly comments = new Map<number, { id: number; body: string }[]>();
  url = "";
  private nextId = 1000;
  private readonly server: Server;

  constructor(
    readonly kind: Kind,
    /** The token accepted now (a function: one that rotates, as a GitHub App's). */
    private readonly token: string | (() => string),
  ) {
    this.server = createServer((req, res) => this.serve(req, res));
  }

  static async start(kind: Kind, token: string | (() => string)): Promise<ForgeContract> {
    const contract = new ForgeContract(kind, token);
    await new Promise<void>((resolve) => contract.server.listen(0, "127.0.0.1", resolve));
    contract.url = `http://127.0.0.1:${(contract.server.address() as AddressInfo).port}`;
    return contract;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private serve(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString();
      const taken: TakenRequest = {
        method: req.method ?? "",
        path: req.url ?? "",
        auth: req.headers.authorization,
        body: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>),
      };
      this.requests.push(taken);
      const fault = this.faults.shift();
      const [status, answer] = fault
        ? [fault.status, fault.body ?? { message: `fault ${fault.status}` }]
        : this.answer(taken);
      res.writeHead(status, { "content-type": "application/json", ...(fault?.headers ?? {}) });
      res.end(JSON.stringify(answer));
    });
  }

  private answer({ method, path, auth, body }: TakenRequest): Answer {
    const token = typeof this.token === "string" ? this.token : this.token();
    if (auth !== (this.kind === "gitea" ? `token ${token}` : `Bearer ${token}`))
      return [401, { message: "Bad credentials" }];
    const url = new URL(path, "http://forge");
    const paths = PATHS[this.kind];
    const status = paths.status.exec(url.pathname);
    if (status && method === "POST") return this.postStatus(status[1] as string, body);
    const list = paths.list.exec(url.pathname);
    if (list && method === "POST") return this.postComment(Number(list[1]), body);
    if (list && method === "GET") return this.listComments(Number(list[1]), url.searchParams);
    const one = paths.one.exec(url.pathname);
    if (one && method === paths.edit) return this.editComment(Number(one[1]), body);
    return [404, { message: "Not Found" }];
  }

  private postStatus(sha: string, body: Record<string, unknown>): Answer {
    this.statuses.set(sha, [...(this.statuses.get(sha) ?? []), body]);
    return [201, { id: this.nextId++, ...body }];
  }

  private postComment(pr: number, body: Record<string, unknown>): Answer {
    const comment = { id: this.nextId++, body: String(body.body) };
    this.comments.set(pr, [...(this.comments.get(pr) ?? []), comment]);
    return [201, comment];
  }

  private listComments(pr: number, query: URLSearchParams): Answer {
    const all = this.comments.get(pr) ?? [];
    if (this.kind === "gitea") return [200, all];
    const perPage = Number(query.get("per_page") ?? (this.kind === "github" ? 30 : 20));
    const page = Number(query.get("page") ?? 1);
    return [200, all.slice((page - 1) * perPage, page * perPage)];
  }

  private editComment(id: number, body: Record<string, unknown>): Answer {
    const found = [...this.comments.values()].flat().find((c) => c.id === id);
    if (!found) return [404, { message: "Not Found" }];
    found.body = String(body.body);
    return [200, found];
  }
}
