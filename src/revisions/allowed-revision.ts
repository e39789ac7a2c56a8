import { gitdirOf, inHistory, resolveRevision } from "../git/read-tree.js";

/** Which revisions a plan over HTTP may render. */
export interface PlanRevisionPolicy {
  /** The source branch: its tip and every commit in its history are allowed. */
  readonly sourceBranch: string;
  /**
   * Branch-name patterns the operator allows besides (`*` matches within a path segment, `**`
   * across them), such as `pr/*` for the heads of pull requests a CI job pushes.
   */
  readonly patterns: readonly string[];
}

/**
 * Whether `revision` may be planned: a name the operator's patterns allow (with `~N`/`^` steps), or
 * any revision that resolves to the source branch's tip or a commit in its history — so an
 * unauthenticated client cannot have the controller render an unmerged branch; "unknown" when it
 * names nothing.
 */
export async function revisionVerdict(
  repo: string,
  revision: string,
  policy: PlanRevisionPolicy,
): Promise<"allowed" | "refused" | "unknown"> {
  const name = /^(.+?)((?:~[0-9]*|\^)*)$/.exec(revision)?.[1] ?? revision;
  const [commit, tip] = await Promise.all([
    resolveRevision(repo, revision).catch(() => undefined),
    resolveRevision(repo, policy.sourceBranch).catch(() => undefined),
  ]);
  if (!commit) return "unknown";
  if (policy.patterns.some((pattern) => globMatches(pattern, name))) return "allowed";
  if (!tip) return "refused";
  return (await inHistory(gitdirOf(repo), {}, tip, commit)) ? "allowed" : "refused";
}

function globMatches(pattern: string, name: string): boolean {
  const source = pattern
    .split("**")
    .map((part) => part.split("*").map(escapeRegExp).join("[^/]*"))
    .join(".*");
  return new RegExp(`^${source}$`).test(name);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
}
