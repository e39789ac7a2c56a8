import { FORGE_KINDS, type ForgeKind } from "./forge.js";
import { ForgeError } from "./forge-http.js";

/** Which forge, where its API is and which repository: given, or read from the fleet repo's URL. */
export interface ForgeTarget {
  readonly kind: ForgeKind;
  readonly apiUrl: string;
  readonly repo: string;
}

export interface ForgeTargetInput {
  /** The fleet repo's URL (https://host/owner/name.git, ssh://git@host/owner/name.git, git@host:owner/name.git). */
  readonly repoUrl?: string;
  readonly kind?: string;
  readonly apiUrl?: string;
  readonly repo?: string;
}

/**
 * The forge to talk to. github.com and gitlab.com are known by their host; any other host (GitHub
 * Enterprise, a self-managed GitLab, Gitea or Forgejo) needs the kind said. The API URL follows from
 * the host (api.github.com, /api/v3, /api/v4, /api/v1; github.com's or gitlab.com's when no host is
 * known) unless given; the repository from the URL's path.
 */
export function forgeTarget(input: ForgeTargetInput): ForgeTarget {
  const parsed = input.repoUrl ? parseRepoUrl(input.repoUrl) : undefined;
  const kind = forgeKind(input.kind, parsed?.host);
  const repo = input.repo ?? parsed?.path;
  if (!repo)
    throw new ForgeError("the forge repository is not known: give it (owner/name) or a fleet repo URL");
  const apiUrl = input.apiUrl ?? defaultApiUrl(kind, parsed?.host);
  if (!apiUrl) throw new ForgeError(`the ${kind} API URL is not known: give it`);
  let url: URL;
  try {
    url = new URL(apiUrl);
  } catch {
    throw new ForgeError(`"${apiUrl.slice(0, 200)}" is not a URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new ForgeError(`the forge API URL must be http(s), not ${url.protocol}`);
  if (url.username || url.password) throw new ForgeError("the forge API URL may not carry credentials");
  return { kind, apiUrl: url.toString().replace(/\/+$/, ""), repo };
}

function forgeKind(given: string | undefined, host: string | undefined): ForgeKind {
  if (given !== undefined) {
    const kind = FORGE_KINDS.find((k) => k === given || (given === "forgejo" && k === "gitea"));
    if (!kind)
      throw new ForgeError(`unknown forge "${given.slice(0, 40)}" (${FORGE_KINDS.join(", ")}, forgejo)`);
    return kind;
  }
  if (host === "github.com") return "github";
  if (host === "gitlab.com") return "gitlab";
  throw new ForgeError(
    `which forge ${host ?? "the repository"} is cannot be told from its host: say github, gitlab or gitea`,
  );
}

// github.com's and gitlab.com's APIs when no host is known; a self-hosted forge's API on its host.
function defaultApiUrl(kind: ForgeKind, host: string | undefined): string | undefined {
  if (kind === "github")
    return host === undefined || host === "github.com" ? "https://api.github.com" : `https://${host}/api/v3`;
  if (kind === "gitlab") return `https://${host ?? "gitlab.com"}/api/v4`;
  return host === undefined ? undefined : `https://${host}/api/v1`;
}

// host and owner/name from https://, ssh:// and scp-like (git@host:path) URLs.
function parseRepoUrl(repoUrl: string): { host: string; path: string } | undefined {
  const scp = /^[A-Za-z0-9._-]+@([A-Za-z0-9.-]+):(?!\/)(.+)$/.exec(repoUrl);
  let host: string;
  let path: string;
  if (scp) {
    host = scp[1] as string;
    path = scp[2] as string;
  } else {
    let url: URL;
    try {
      url = new URL(repoUrl);
    } catch {
      return undefined;
    }
    host = url.host;
    path = decodeURIComponent(url.pathname);
  }
  const cleaned = path.replace(/^\/+|\/+$/g, "").replace(/\.git$/, "");
  return cleaned === "" ? undefined : { host: host.toLowerCase(), path: cleaned };
}
