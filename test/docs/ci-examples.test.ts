import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { buildProgram } from "../../src/cli/main.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const JOBS = ["docs/examples/ci/github-actions.yml", "docs/examples/ci/gitlab-ci.yml"];

// Every `gitfleet <command> …` the job's scripts run, as one line each (continuations joined).
function gitfleetCommands(text: string): string[] {
  const scripts: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === "string") scripts.push(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === "object") Object.values(value).forEach(walk);
  };
  walk(parse(text));
  return scripts
    .map((script) => script.replace(/\\\n\s*/g, " ").replace(/\n\s*/g, " "))
    .flatMap((script) => [...script.matchAll(/gitfleet (validate|plan)\b[^|;]*/g)].map((m) => m[0]));
}

describe("the example CI jobs", () => {
  const program = buildProgram({ out: () => {}, err: () => {} }, () => {});
  it.each(JOBS)("%s validates, then posts the plan, with flags gitfleet has", (path) => {
    const commands = gitfleetCommands(readFileSync(join(ROOT, path), "utf8"));
    expect(commands.map((c) => c.split(" ")[1])).toEqual(["validate", "plan"]);
    const plan = commands[1] ?? "";
    expect(plan).toContain("--post");
    const known = new Set(program.commands.find((c) => c.name() === "plan")?.options.map((o) => o.long));
    const used = [...plan.matchAll(/--[a-z][a-z-]*/g)].map((m) => m[0]);
    expect(used.filter((flag) => !known.has(flag))).toEqual([]);
  });
});
