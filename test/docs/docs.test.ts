import { execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliReference } from "../../src/cli/cli-reference.js";
import { buildProgram } from "../../src/cli/main.js";
import { tempDir } from "../helpers/git-repo.js";

/**
 * The documentation stays true: the CLI reference is what the command definitions say, every
 * relative link reaches a file (and a heading, when it names one), and every `$ gitfleet …` example
 * the docs show runs against the example fleet without a usage error or a crash.
 */
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = join(ROOT, "bin/gitfleet.js");

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : markdownFiles(path);
    return entry.name.endsWith(".md") ? [path] : [];
  });
}

const PAGES = [
  join(ROOT, "README.md"),
  ...markdownFiles(join(ROOT, "docs")),
  ...markdownFiles(join(ROOT, "src")),
];

// Heading anchors as GitHub makes them: lower case, punctuation dropped, spaces to hyphens.
function anchors(file: string): Set<string> {
  const text = readFileSync(file, "utf8").replace(/```[\s\S]*?```/g, "");
  return new Set(
    [...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
      (m[1] as string)
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\- ]/gu, "")
        .replaceAll(" ", "-"),
    ),
  );
}

// Why a relative link does not lead where it says, if it does not.
function brokenLink(page: string, link: string): string[] {
  const [path = "", anchor] = link.split("#");
  const target = path === "" ? page : resolve(dirname(page), decodeURIComponent(path));
  const where = `${relative(ROOT, page)} → ${link}`;
  if (!existsSync(target)) return [`${where}: no such file`];
  if (anchor && statSync(target).isFile() && !anchors(target).has(anchor))
    return [`${where}: no heading #${anchor}`];
  return [];
}

function links(file: string): string[] {
  const text = readFileSync(file, "utf8").replace(/```[\s\S]*?```/g, "");
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] as string).filter((t) => !/^[a-z]+:/.test(t));
}

describe("the docs", () => {
  it("have pages to check", () => {
    expect(PAGES.length).toBeGreaterThan(20);
  });

  it("give the CLI reference the command definitions give (npm run docs)", () => {
    const program = buildProgram({ out: () => {}, err: () => {} }, () => {});
    expect(readFileSync(join(ROOT, "docs/cli-reference.md"), "utf8")).toBe(cliReference(program));
  });

  it("link only to files and headings that exist", () => {
    const broken = PAGES.flatMap((page) => links(page).flatMap((link) => brokenLink(page, link)));
    expect(broken).toEqual([]);
  });
});

// Every `$ gitfleet …` line in a code block, with the page that shows it.
function examples(): [string, string][] {
  return PAGES.flatMap((page) =>
    [...readFileSync(page, "utf8").matchAll(/```[^\n]*\n([\s\S]*?)```/g)].flatMap((block) =>
      (block[1] as string)
        .split("\n")
        .filter((line) => /^\$ (npx )?gitfleet /.test(line))
        .map((line): [string, string] => [relative(ROOT, page), line.replace(/^\$ (npx )?gitfleet /, "")]),
    ),
  );
}

describe("the docs' examples", () => {
  let dir: string;
  let cleanup: () => void;
  beforeAll(() => {
    // A working directory as the docs assume: the example fleet as a Git repository in ./fleet,
    // example-repo/ and docs/examples/ beside it.
    ({ dir, cleanup } = tempDir("gitfleet-docs-"));
    cpSync(join(ROOT, "example-repo"), join(dir, "fleet"), { recursive: true });
    cpSync(join(ROOT, "example-repo"), join(dir, "example-repo"), { recursive: true });
    cpSync(join(ROOT, "docs/examples"), join(dir, "docs/examples"), { recursive: true });
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=docs", "-c", "user.email=docs@example.com", ...args], {
        cwd: join(dir, "fleet"),
      });
    git("init", "-q", "-b", "main");
    git("add", "-A");
    git("commit", "-q", "-m", "the example fleet");
  });
  afterAll(() => cleanup());

  const found = examples();
  it("are there", () => {
    expect(found.length).toBeGreaterThan(3);
  });

  // A command that keeps running (a server, simulated members) passes once it has run a few
  // seconds without failing; the rest must end with a documented exit code other than a usage error.
  it.each(found)(
    "%s: gitfleet %s",
    async (_page, command) => {
      const { code, stderr } = await runExample(command, dir);
      expect(stderr).not.toMatch(/internal error|unknown option|error: /);
      expect([0, 1, 2, 3, "running"]).toContain(code);
    },
    60_000,
  );
});

function runExample(command: string, cwd: string): Promise<{ code: number | "running"; stderr: string }> {
  return new Promise((done) => {
    const child = spawn("sh", ["-c", `exec node ${JSON.stringify(BIN)} ${command}`], {
      cwd,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => {
      child.kill("SIGINT");
      done({ code: "running", stderr });
    }, 8000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      done({ code: code ?? 1, stderr });
    });
  });
}
