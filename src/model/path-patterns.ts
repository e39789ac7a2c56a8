// CODEOWNERS-style path patterns, as a Team names the files it owns: relative to the repository
// root, `*` matches within one path segment, `**` any number of segments (`apps/shop/**`), a pattern
// ending in `/` everything under that directory. Patterns come from the fleet repo, so they are
// matched without regular expressions: the positions a path can reach after each token, at most
// pattern length × path length steps whatever the pattern. Pure.

/** A pattern compiled once: does a repo-relative path match it. */
export type PathMatcher = (path: string) => boolean;

type Token = { readonly type: "any" } | { readonly type: "segments" } | { readonly type: "star" } | string;

/** The matcher of one pattern. */
export function pathMatcher(pattern: string): PathMatcher {
  const tokens = tokenize(pattern.replace(/^\/+/, "").replace(/\/$/, "/**"));
  return (path) => matches(tokens, path);
}

/** Whether a name matches a pattern with `*` (a namespace pattern such as `shop-*`). */
export function matchesNamePattern(pattern: string, name: string): boolean {
  if (!pattern.includes("*")) return pattern === name;
  return matches(tokenize(pattern.replaceAll("**", "*")), name);
}

function tokenize(pattern: string): Token[] {
  const tokens: Token[] = [];
  for (let i = 0; i < pattern.length; i++) {
    if (pattern.startsWith("**/", i)) {
      // Consecutive `**/` mean what one does.
      if ((tokens.at(-1) as { type?: string } | undefined)?.type !== "segments")
        tokens.push({ type: "segments" });
      i += 2;
    } else if (pattern.startsWith("**", i)) {
      tokens.push({ type: "any" });
      i += 1;
    } else if (pattern[i] === "*") tokens.push({ type: "star" });
    else tokens.push(pattern[i] as string);
  }
  return tokens;
}

// The set of path positions reachable after each token; the path matches when its end is reached.
function matches(tokens: readonly Token[], path: string): boolean {
  let reached = new Set<number>([0]);
  for (const token of tokens) {
    const next = new Set<number>();
    for (const at of reached) advance(token, path, at, next);
    if (next.size === 0) return false;
    reached = next;
  }
  return reached.has(path.length);
}

function advance(token: Token, path: string, at: number, next: Set<number>): void {
  if (typeof token === "string") {
    if (path[at] === token) next.add(at + 1);
    return;
  }
  if (token.type === "any") {
    for (let j = at; j <= path.length; j++) next.add(j);
    return;
  }
  if (token.type === "star") {
    next.add(at);
    for (let j = at; j < path.length && path[j] !== "/"; j++) next.add(j + 1);
    return;
  }
  // `**/`: zero or more whole segments, each ending in "/".
  next.add(at);
  for (let j = at; j < path.length; j++) if (path[j] === "/" && j > at) next.add(j + 1);
}
