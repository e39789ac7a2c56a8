import { createHash, timingSafeEqual } from "node:crypto";
import type { Viewer } from "../model/viewers.js";

/**
 * Bearer tokens for automation (`--api-tokens-file`): one per line, `<name> <names> sha256:<hex>`,
 * where `<names>` are the owner names the token acts as, comma-separated (`@example-shop/platform`
 * for the platform team, `@example-shop/games` for a team) and the hash is of the token itself —
 * the file never holds a token. `#` starts a comment.
 */
export class ApiTokens {
  private constructor(
    private readonly entries: readonly { readonly hash: Buffer; readonly viewer: Viewer }[],
  ) {}

  /** Reads the file's text; throws naming the line on anything else. */
  static parse(text: string): ApiTokens {
    const entries: { hash: Buffer; viewer: Viewer }[] = [];
    text.split(/\r?\n/).forEach((raw, i) => {
      const line = raw.replace(/#.*$/, "").trim();
      if (line === "") return;
      const match = /^([A-Za-z0-9._-]{1,100})\s+(\S{1,2000})\s+sha256:([0-9a-f]{64})$/.exec(line);
      if (!match) throw new Error(`line ${i + 1}: expected "<name> <owner names> sha256:<64 hex>"`);
      const [, name = "", names = "", hex = ""] = match;
      const owners = names.split(",").filter((n) => n !== "");
      if (owners.length === 0) throw new Error(`line ${i + 1}: the token acts as nobody`);
      entries.push({ hash: Buffer.from(hex, "hex"), viewer: { subject: `token:${name}`, names: owners } });
    });
    return new ApiTokens(entries);
  }

  /** The viewer a token acts as, or undefined for a token no line names. Compared by hash, in constant time. */
  viewerOf(token: string): Viewer | undefined {
    if (token.length === 0 || token.length > 4096) return undefined;
    const hash = createHash("sha256").update(token).digest();
    let found: Viewer | undefined;
    for (const entry of this.entries) if (timingSafeEqual(entry.hash, hash)) found = entry.viewer;
    return found;
  }
}
