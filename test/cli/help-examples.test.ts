import { describe, expect, it } from "vitest";
import { commandPath, HELP_EXAMPLES } from "../../src/cli/help-examples.js";
import { buildProgram, descendants } from "../../src/cli/main.js";

// Every command's --help ends with examples, and every flag an example names is one the command
// has (a renamed flag fails here, not in a reader's terminal).

const output = { out: () => undefined, err: () => undefined };
const program = buildProgram(output, () => undefined);
const commands = descendants(program).filter((c) => c.name() !== "help");

describe("help examples", () => {
  it.each(commands.map((c) => [commandPath(c), c] as const))(
    "gitfleet %s has examples in its help",
    (path, command) => {
      const examples = HELP_EXAMPLES[path] ?? [];
      expect(examples.length).toBeGreaterThan(0);
      const help =
        command.helpInformation() + String((command as unknown as { _helpText?: string })._helpText ?? "");
      const said: string[] = [];
      command.configureOutput({ writeOut: (t) => void said.push(t), writeErr: () => undefined });
      command.outputHelp();
      expect(`${help}${said.join("")}`).toContain(`$ ${examples[0]}`);
    },
  );

  // Each example's command is the longest command path it starts with ("migrate status", not "migrate").
  const examples = Object.values(HELP_EXAMPLES)
    .flat()
    .filter((e) => e.startsWith("gitfleet "));
  it.each(examples)("%s names only its command's flags", (example) => {
    const own = example.split("|")[0] ?? "";
    const command = commands
      .filter((c) => `${own} `.startsWith(`gitfleet ${commandPath(c)} `))
      .sort((a, b) => commandPath(b).length - commandPath(a).length)[0];
    expect(command, example).toBeDefined();
    const flags = new Set(
      (command?.options ?? []).flatMap((o) => [o.long, o.short]).filter((f): f is string => f !== undefined),
    );
    for (const flag of own.match(/(?<=\s)--?[a-zA-Z][\w-]*/g) ?? [])
      expect(flags, `${example}: ${flag}`).toContain(flag);
  });
});
