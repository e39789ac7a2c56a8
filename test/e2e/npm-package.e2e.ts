import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The npm package as a user gets it: `npm pack` of this checkout (built by `npm run test:e2e`),
 * installed into an empty directory from the tarball alone, and its `gitfleet` run there — validate,
 * render and the demo's help — with nothing of the checkout on hand.
 */
const root = fileURLToPath(new URL("../..", import.meta.url));
let dir: string;
let installed: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "gitfleet-package-"));
  // The checkout is built already; packing builds nothing again.
  execFileSync("npm", ["pack", "--ignore-scripts", "--silent", "--pack-destination", dir], {
    cwd: root,
    stdio: ["ignore", "ignore", "inherit"],
  });
  const tarball = readdirSync(dir).find((name) => name.endsWith(".tgz"));
  if (!tarball) throw new Error("npm pack made no tarball");
  installed = join(dir, "user");
  execFileSync("mkdir", [installed]);
  writeFileSync(join(installed, "package.json"), '{ "name": "a-user", "private": true }\n');
  execFileSync(
    "npm",
    ["install", "--no-audit", "--no-fund", "--prefer-offline", "--omit=dev", join(dir, tarball)],
    { cwd: installed, stdio: ["ignore", "ignore", "inherit"], timeout: 600_000 },
  );
}, 900_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function gitfleet(...args: string[]) {
  return spawnSync(join(installed, "node_modules", ".bin", "gitfleet"), args, {
    cwd: installed,
    encoding: "utf8",
    timeout: 120_000,
  });
}

describe("the npm package, installed from its tarball", () => {
  it("validates and renders the example fleet it ships, and explains the demo", () => {
    const example = join(installed, "node_modules", "gitfleet", "example-repo");
    const validate = gitfleet("validate", example);
    expect(validate.stderr).toBe("");
    expect(validate.status).toBe(0);
    expect(validate.stdout).toMatch(/valid: 7 clusters, 11 apps/);
    const out = join(dir, "rendered");
    const render = gitfleet("render", example, "--out", out);
    expect(render.status).toBe(0);
    expect(render.stdout).toMatch(/^rendered \d+ objects for 7 clusters/);
    expect(existsSync(join(out, "rendered"))).toBe(true);
    const demo = gitfleet("demo", "--help");
    expect(demo.status).toBe(0);
    expect(demo.stdout).toContain("Usage: gitfleet demo");
  });

  it("ships its license and the dashboard gitfleet run serves", () => {
    const shipped = join(installed, "node_modules", "gitfleet");
    expect(existsSync(join(shipped, "LICENSE"))).toBe(true);
    expect(existsSync(join(shipped, "dist", "dashboard", "index.html"))).toBe(true);
    // Nothing of the tests or the checkout's tooling is shipped.
    expect(existsSync(join(shipped, "test"))).toBe(false);
    expect(existsSync(join(shipped, "dist", "test"))).toBe(false);
  });
});
