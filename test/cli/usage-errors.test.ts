import { describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.js";

// Every command's usage errors exit 64 (docs/commands.md), through the one error boundary: a missing
// required flag, an unknown flag, a value outside its choices, an unknown command; help exits 0.

function run(...argv: string[]) {
  const said: string[] = [];
  const output = { out: () => undefined, err: (text: string) => void said.push(text) };
  return runCli(argv, output).then((code) => ({ code, err: said.join("") }));
}

describe("usage errors", () => {
  it.each([
    [["plan"], /required option '--repo/],
    [["plan", "--repo", ".", "--head", "x", "--base", "y", "--format", "yaml-ish"], /--format/],
    [["run"], /required option '--repo/],
    [["reconcile", "--once"], /required option '--repo/],
    [["agent"], /required option/],
    [["validate", "--no-such-flag"], /unknown option '--no-such-flag'/],
    [["render", "."], /required option '--out/],
    [["status", "clusters", "--format", "xml"], /--format/],
    [["no-such-command"], /unknown command/],
  ])("gitfleet %j exits 64", async (argv, message) => {
    const { code, err } = await run(...argv);
    expect(err).toMatch(message);
    expect(code).toBe(64);
  });

  it.each([[["--help"]], [["plan", "--help"]], [["migrate", "--help"]], [["--version"]]])(
    "gitfleet %j exits 0",
    async (argv) => {
      expect((await run(...argv)).code).toBe(0);
    },
  );
});
