import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.js";
import { tempDir } from "../helpers/git-repo.js";

// `gitfleet completion <shell>`, run by the real shells: bash completes commands, subcommands, flags
// and a flag's choices; fish the same through its own `complete`; zsh registers it through its bash
// completion emulation.

const { dir, cleanup } = tempDir("gitfleet-completion-");
const scripts: Record<string, string> = {};
beforeAll(async () => {
  for (const shell of ["bash", "zsh", "fish"]) {
    const said: string[] = [];
    const code = await runCli(["completion", shell], { out: (t) => void said.push(t), err: () => undefined });
    expect(code).toBe(0);
    scripts[shell] = join(dir, `gitfleet.${shell}`);
    writeFileSync(scripts[shell] as string, said.join(""));
  }
});
afterAll(cleanup);

const shell = (program: string, script: string) => {
  const run = spawnSync(program, ["-c", script], { cwd: dir, encoding: "utf8", timeout: 30_000 });
  return { stdout: run.stdout, stderr: run.stderr, status: run.status };
};

// What bash offers after the words typed (the last one being completed).
function bash(...words: string[]): string[] {
  const typed = words.map((w) => `'${w}'`).join(" ");
  const { stdout, stderr } = shell(
    "bash",
    `source '${scripts.bash}'; COMP_WORDS=(${typed}); COMP_CWORD=${words.length - 1}; _gitfleet_completion; printf '%s\\n' "\${COMPREPLY[@]}"`,
  );
  expect(stderr).toBe("");
  return stdout.split("\n").filter((line) => line !== "");
}

// What fish offers for a command line (the values only, without descriptions).
function fish(line: string): string[] {
  const { stdout, stderr } = shell("fish", `source '${scripts.fish}'; complete -C '${line}'`);
  expect(stderr).toBe("");
  return stdout
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => l.split("\t")[0] as string);
}

describe("shell completion", () => {
  it.each([
    [["gitfleet", "pl"], ["plan"]],
    [
      ["gitfleet", "co"],
      ["codeowners", "completion"],
    ],
    [
      ["gitfleet", "plan", "--fo"],
      ["--forge", "--forge-api-url", "--forge-repo", "--forge-token-env", "--forge-token-file", "--format"],
    ],
    [
      ["gitfleet", "plan", "--format", ""],
      ["text", "markdown", "json", "yaml"],
    ],
    [["gitfleet", "migrate", "st"], ["status"]],
    [["gitfleet", "migrate", "status", "--re"], ["--repo"]],
    [["gitfleet", "completion", "f"], ["fish"]],
    [["gitfleet", "validate", "--team-"], ["--team-source"]],
  ])("bash completes %j with %j", (words, expected) => {
    expect(bash(...words)).toEqual(expected);
  });

  it.each([
    ["gitfleet pl", ["plan"]],
    ["gitfleet plan --format ", ["json", "markdown", "text", "yaml"]],
    ["gitfleet migrate st", ["status"]],
    ["gitfleet completion ", ["bash", "fish", "zsh"]],
    ["gitfleet run --sig", ["--signing-format", "--signing-key"]],
  ])("fish completes %j with %j", (line, expected) => {
    expect(fish(line).sort()).toEqual(expected);
  });

  it("registers with zsh's completion through its bash emulation", () => {
    const { stdout, stderr } = shell(
      "zsh",
      `autoload -U compinit && compinit -u -D; source '${scripts.zsh}'; print -r -- \${_comps[gitfleet]}`,
    );
    expect(stderr).toBe("");
    expect(stdout.trim()).toBe("_bash_complete -o default -F _gitfleet_completion");
  });
});
