import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

/**
 * scripts/prerequisites.sh, the one list of what `npm test`, `npm run test:e2e` and the image check
 * need from the machine: on a machine that lacks them and cannot install them (no apt-get on PATH
 * here), it stops at once with the exact command to run.
 */
const root = fileURLToPath(new URL("../..", import.meta.url));
const home = mkdtempSync(join(tmpdir(), "gitfleet-prerequisites-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

/** A PATH holding only `tools` (each linked to the machine's own), so everything else is missing. */
function bareMachine(name: string, tools: readonly string[]): string {
  const bin = join(home, name);
  mkdirSync(bin);
  for (const tool of tools) {
    // The system's own binary first: a version manager's shim needs more of the PATH than this one.
    const found = existsSync(`/usr/bin/${tool}`)
      ? `/usr/bin/${tool}`
      : spawnSync("bash", ["-c", `command -v ${tool}`], { encoding: "utf8" }).stdout.trim();
    if (found) symlinkSync(found, join(bin, tool));
  }
  return bin;
}

function check(target: string, path: string, env: Record<string, string> = {}) {
  const result = spawnSync("/bin/bash", [join(root, "scripts/prerequisites.sh"), target], {
    encoding: "utf8",
    env: { HOME: home, PATH: path, ...env },
  });
  return { status: result.status, stderr: result.stderr };
}

const BASE = ["node", "id", "head", "dirname"];

describe("scripts/prerequisites.sh", () => {
  it("passes on this machine, which has everything", () => {
    for (const target of ["test", "e2e", "image"])
      expect(check(target, process.env.PATH ?? "")).toEqual({ status: 0, stderr: "" });
  });

  it.each([
    [
      "test",
      [],
      "sudo apt-get install -y git openssh-client chromium openssl zsh fish",
      ["go 1.26 or newer", "kubectl 1.32 or newer"],
    ],
    [
      "test",
      ["git", "ssh-keygen", "openssl", "zsh", "fish", "go", "kubectl"],
      "sudo apt-get install -y chromium",
      [],
    ],
    [
      "e2e",
      ["git"],
      "sudo apt-get install -y openssl util-linux dnsutils openssh-client",
      ["go 1.26 or newer"],
    ],
    ["image", ["python3"], "sudo apt-get install -y iproute2", []],
  ])("names what %s lacks (given %j) and the command that brings it", (target, tools, command, others) => {
    const bin = bareMachine(`${target}-${tools.length}`, [...BASE, ...tools]);
    const { status, stderr } = check(target, bin);
    expect(status).toBe(69);
    expect(stderr).toContain(`run  ${command}\n`);
    for (const other of others) expect(stderr).toContain(other);
    if (others.length === 0) expect(stderr.match(/^ {2}- /gm)).toHaveLength(1);
  });

  it("does not ask for chromium when GITFLEET_CHROMIUM names a browser", () => {
    const bin = bareMachine("chromium-named", [
      ...BASE,
      "git",
      "ssh-keygen",
      "openssl",
      "zsh",
      "fish",
      "go",
      "kubectl",
    ]);
    expect(check("test", bin, { GITFLEET_CHROMIUM: "/opt/browser" })).toEqual({ status: 0, stderr: "" });
  });

  it("refuses a target it does not know with a usage exit code", () => {
    const { status, stderr } = check("everything", process.env.PATH ?? "");
    expect(status).toBe(64);
    expect(stderr).toContain("unknown target 'everything' (test, e2e or image)");
  });
});
