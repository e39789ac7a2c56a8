import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/** The pure core (DESIGN.md §2) does no I/O and reads no clock, randomness or environment. */
const CORE_DIRS = ["model", "schedule", "render", "plan", "reconcile", "autoscale", "observe"];
const FORBIDDEN: readonly [string, RegExp][] = [
  ["a Node.js built-in", /from "node:/],
  ["the filesystem", /from "(fs|path|os|child_process|net|http|https)"/],
  ["isomorphic-git", /from "isomorphic-git/],
  ["the Kubernetes client", /from "@kubernetes\//],
  ["the logger", /from "pino"/],
  ["the clock", /Date\.now\(|new Date\(/],
  ["randomness", /Math\.random\(/],
  ["the environment", /process\.env/],
  ["the process", /process\.(stdout|stderr|exit)/],
  ["the console", /console\./],
];

const srcRoot = fileURLToPath(new URL("../../src", import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .map((file) => join(dir, file));
}

describe("the pure core", () => {
  const files = CORE_DIRS.flatMap((dir) => sourceFiles(join(srcRoot, dir)));

  it("has files to check", () => {
    expect(files.length).toBeGreaterThan(10);
  });

  it.each(FORBIDDEN)("never touches %s", (_what, pattern) => {
    const offenders = files.filter((file) => pattern.test(readFileSync(file, "utf8")));
    expect(offenders).toEqual([]);
  });
});
