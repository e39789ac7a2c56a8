import { existsSync, readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { extname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
};

/**
 * Where `npm run build` put the dashboard: dist/dashboard beside dist/src (the compiled server), or
 * from the TypeScript sources (tests), dist/dashboard at the repository's root. Undefined when it was
 * not built.
 */
export function dashboardDirectory(): string | undefined {
  return [
    fileURLToPath(new URL("../../dashboard/", import.meta.url)),
    fileURLToPath(new URL("../../dist/dashboard/", import.meta.url)),
  ].find((dir) => existsSync(join(dir, "index.html")) && existsSync(join(dir, "assets")));
}

/**
 * Serves a file of the built dashboard; any path that is not a file gets index.html (the app routes
 * by the URL's hash). Built assets have content hashes in their names, so they are cached for good.
 */
export function serveDashboard(root: string, path: string, response: ServerResponse): void {
  const relative = normalize(decodeURIComponent(path)).replace(/^([/\\])+/, "");
  const file = join(root, relative);
  const inside = file.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
  const target =
    inside && relative !== "" && existsSync(file) && !file.endsWith(sep) ? file : join(root, "index.html");
  let body: Buffer;
  try {
    body = readFileSync(target);
  } catch {
    body = readFileSync(join(root, "index.html"));
  }
  const immutable = target.includes(`${sep}assets${sep}`);
  response
    .writeHead(200, {
      "content-type": TYPES[extname(target)] ?? "application/octet-stream",
      "cache-control": immutable ? "public, max-age=31536000, immutable" : "no-cache",
      "x-content-type-options": "nosniff",
    })
    .end(body);
}
