import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { helm, helmBinary, serveOciRegistry } from "../helpers/helm.js";

/**
 * The release steps (scripts/release.sh): the charts packaged and pushed to an OCI registry (a
 * loopback one, as the Helm app tests use), pulled back by helm and rendering what the checkout's
 * charts render; the SBOM of the image's Node.js dependencies; the version check.
 */
const root = fileURLToPath(new URL("../..", import.meta.url));
const run = promisify(execFile);
const VERSION = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version as string;
let binary: string;
let home: string;
let registry: Awaited<ReturnType<typeof serveOciRegistry>>;

beforeAll(async () => {
  binary = helmBinary();
  home = mkdtempSync(join(tmpdir(), "gitfleet-release-"));
  registry = await serveOciRegistry();
}, 20 * 60_000);
afterAll(async () => {
  await registry?.close();
  rmSync(home, { recursive: true, force: true });
  rmSync(join(root, "dist/release"), { recursive: true, force: true });
});

const release = (...args: string[]) =>
  run("bash", [join(root, "scripts/release.sh"), ...args], {
    cwd: root,
    encoding: "utf8",
    env: {
      ...process.env,
      GITFLEET_HELM: binary,
      HELM_PUSH_FLAGS: "--plain-http",
      HOME: home,
      HELM_CACHE_HOME: join(home, "cache"),
      HELM_CONFIG_HOME: join(home, "config"),
      HELM_DATA_HOME: join(home, "data"),
    },
    maxBuffer: 64 * 2 ** 20,
  });

const template = (chart: string, flags: string[], sets: string[]) =>
  helm(binary, home, [
    "template",
    "r",
    chart,
    ...flags,
    "--namespace",
    "gitfleet-system",
    ...sets.flatMap((s) => ["--set", s]),
  ]);

describe("the release steps", () => {
  it("push both charts to an OCI registry, from which helm pulls what the checkout renders", async () => {
    await release(VERSION, registry.url, "charts");
    expect(registry.requests).toEqual(
      expect.arrayContaining([
        `PUT /v2/charts/gitfleet/manifests/${VERSION}`,
        `PUT /v2/charts/gitfleet-agent/manifests/${VERSION}`,
      ]),
    );
    const sets: Record<string, string[]> = {
      gitfleet: ["repo.url=https://git.example.com/fleet.git"],
      "gitfleet-agent": ["repo.url=https://git.example.com/fleet.git", "cluster=west"],
    };
    for (const [chart, values] of Object.entries(sets)) {
      const pulled = await template(
        `oci://${registry.url}/charts/${chart}`,
        ["--version", VERSION, "--plain-http"],
        values,
      );
      expect(pulled).toBe(await template(join(root, "charts", chart), [], values));
    }
  });

  it("write the SBOM of the image's Node.js dependencies, development ones left out", async () => {
    await release(VERSION, registry.url, "sbom");
    const sbom = JSON.parse(readFileSync(join(root, `dist/release/gitfleet-${VERSION}.cdx.json`), "utf8"));
    expect(sbom.bomFormat).toBe("CycloneDX");
    const names = new Set((sbom.components as { name: string }[]).map((c) => c.name));
    for (const runtime of ["yaml", "isomorphic-git", "commander", "@kubernetes/client-node"])
      expect(names).toContain(runtime);
    for (const development of ["vitest", "@biomejs/biome", "fast-check"])
      expect(names).not.toContain(development);
  });

  it.each([
    ["a version the package does not have", ["9.9.9"], "package.json says"],
    ["a version that is not semantic", ["1.0"], "is not a semantic version"],
    ["a step it does not know", [VERSION, "x", "publish"], "no step publish"],
  ])("refuse %s", async (_name, args, message) => {
    const [version, where = registry.url, ...steps] = args as [string, ...string[]];
    await expect(release(version, where, ...(steps.length > 0 ? steps : ["check"]))).rejects.toThrow(message);
  });

  it("check that the changelog has the release's section", async () => {
    const changelog = readFileSync(join(root, "CHANGELOG.md"), "utf8");
    const check = release(VERSION, registry.url, "check");
    if (changelog.includes(`## [${VERSION}]`)) await expect(check).resolves.toBeDefined();
    else await expect(check).rejects.toThrow(`CHANGELOG.md has no section ## [${VERSION}]`);
  });
});
