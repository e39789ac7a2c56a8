import type { Forge } from "./forge.js";
import { ForgeError } from "./forge-http.js";

/** GitHub takes comments up to 65,536 characters; a longer plan is cut, saying where the rest is. */
const MAX_COMMENT = 60_000;

/** The hidden first line that marks gitfleet's plan comment, one per fleet (`key`) on a pull request. */
export function planMarker(key: string): string {
  return `<!-- gitfleet:plan ${key.replace(/[^A-Za-z0-9_./:@-]/g, "_").slice(0, 200)} -->`;
}

/**
 * Puts the plan on the pull request as a single comment: the one gitfleet wrote before (found by
 * its marker) is edited in place on every push, never a new comment per push. A marked comment that
 * cannot be edited (someone else's) is left alone and a comment of gitfleet's own is made.
 */
export async function upsertPlanComment(
  forge: Forge,
  pullRequest: number,
  key: string,
  markdown: string,
): Promise<{ readonly id: string; readonly created: boolean }> {
  const marker = planMarker(key);
  const body = `${marker}\n${fitComment(markdown)}`;
  const existing = (await forge.comments(pullRequest)).filter((c) => c.body.startsWith(marker)).at(-1);
  if (existing) {
    try {
      await forge.editComment(pullRequest, existing.id, body);
      return { id: existing.id, created: false };
    } catch (error) {
      if (!(error instanceof ForgeError && (error.status === 403 || error.status === 404))) throw error;
    }
  }
  return { id: await forge.createComment(pullRequest, body), created: true };
}

function fitComment(markdown: string): string {
  if (markdown.length <= MAX_COMMENT) return markdown;
  const cut = markdown.lastIndexOf("\n", MAX_COMMENT);
  return `${markdown.slice(0, cut > 0 ? cut : MAX_COMMENT)}\n\n… the plan is longer than a comment holds; the CI job's log has all of it (\`gitfleet plan\`).\n`;
}
