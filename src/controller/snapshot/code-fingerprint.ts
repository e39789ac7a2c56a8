import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { compareStrings } from "../../model/file-tree.js";

let fingerprint: string | undefined;

/**
 * A digest of the code this process runs (every module under src/, or dist/src/ when built): a
 * snapshot holds the in-memory shapes of one build, so a snapshot written by any other build is
 * refused, however small the difference. Computed once per process (a few milliseconds).
 */
export function codeFingerprint(): string {
  fingerprint ??= digestOf(fileURLToPath(new URL("../../", import.meta.url)));
  return fingerprint;
}

function digestOf(root: string): string {
  const hash = createHash("sha256");
  for (const file of modules(root, "")) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(join(root, file)));
    hash.update("\0");
  }
  return hash.digest("hex");
}

function modules(root: string, under: string): string[] {
  const found: string[] = [];
  const entries = readdirSync(join(root, under), { withFileTypes: true }).sort((a, b) =>
    compareStrings(a.name, b.name),
  );
  for (const entry of entries) {
    const path = under ? `${under}/${entry.name}` : entry.name;
    if (entry.isDirectory()) found.push(...modules(root, path));
    else if (/\.(js|ts|json)$/.test(entry.name)) found.push(path);
  }
  return found;
}
