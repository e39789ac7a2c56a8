import type { Command } from "commander";

/** A command as completion sees it: its name, what it does, its flags and its subcommands. */
export interface CompletionTree {
  readonly name: string;
  readonly description: string;
  readonly flags: readonly {
    readonly long: string;
    readonly description: string;
    readonly choices?: readonly string[];
  }[];
  readonly commands: readonly CompletionTree[];
  /** The values its arguments may take, where they are a fixed set (`completion <shell>`). */
  readonly values: readonly string[];
}

export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];

/** The command tree commander holds, as completion needs it (hidden commands and flags left out). */
export function completionTree(command: Command): CompletionTree {
  return {
    name: command.name(),
    description: firstLine(command.description()),
    flags: [
      ...command.options
        .filter((option) => option.long !== undefined && !option.hidden)
        .map((option) => ({
          long: option.long as string,
          description: firstLine(option.description),
          ...(option.argChoices ? { choices: option.argChoices } : {}),
        })),
      { long: "--help", description: "display help for command" },
    ],
    commands: command.commands.filter((sub) => !(sub as { _hidden?: boolean })._hidden).map(completionTree),
    values: command.registeredArguments.flatMap((argument) => argument.argChoices ?? []),
  };
}

/** The completion script for a shell: commands, subcommands, flags, and a flag's choices. */
export function completionScript(tree: CompletionTree, shell: Shell): string {
  if (shell === "fish") return fishScript(tree);
  const bash = bashScript(tree);
  // zsh runs the bash function through its bash completion emulation (sourced after compinit).
  return shell === "zsh" ? `autoload -U +X bashcompinit && bashcompinit\n${bash}` : bash;
}

// A case per command path ("", "status", "status clusters"): its subcommands and flags, and per flag
// with choices, the choices after it.
function bashScript(tree: CompletionTree): string {
  const fn = `_${identifier(tree.name)}_completion`;
  const cases: string[] = [];
  const choices: string[] = [];
  for (const [path, node] of paths(tree)) {
    const words = [...node.commands.map((c) => c.name), ...node.values, ...node.flags.map((f) => f.long)];
    cases.push(`    ${quote(path)}) words=${quote(words.join(" "))} ;;`);
    for (const flag of node.flags)
      if (flag.choices)
        choices.push(`    ${quote(`${path}|${flag.long}`)}) words=${quote(flag.choices.join(" "))} ;;`);
  }
  const subcommands = new Map<string, string[]>();
  for (const [path, node] of paths(tree))
    subcommands.set(
      path,
      node.commands.map((c) => c.name),
    );
  const known = [...subcommands].map(
    ([path, names]) => `    ${quote(path)}) subs=${quote(names.join(" "))} ;;`,
  );
  return `# ${tree.name} completion for bash: source it, or put it in /etc/bash_completion.d/${tree.name}
${fn}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="" path="" subs words word i
  (( COMP_CWORD > 1 )) && prev="\${COMP_WORDS[COMP_CWORD-1]}"
  for (( i = 1; i < COMP_CWORD; i++ )); do
    word="\${COMP_WORDS[i]}"
    case "$path" in
${known.join("\n")}
      *) subs="" ;;
    esac
    [[ " $subs " == *" $word "* ]] && path="\${path:+$path }$word"
  done
  words=""
  case "$path|$prev" in
${choices.join("\n")}
  esac
  if [[ -z "$words" ]]; then
    case "$path" in
${cases.join("\n")}
    esac
  fi
  COMPREPLY=( $(compgen -W "$words" -- "$cur") )
}
complete -o default -F ${fn} ${tree.name}
`;
}

// fish: each subcommand where its parent's path is what was typed, each flag where its command is.
// The path is one word ("root", "root/status", "root/status/clusters"), so a condition compares it whole.
function fishScript(tree: CompletionTree): string {
  const fn = `__${identifier(tree.name)}_path`;
  const key = (path: string) => ["root", ...(path ? path.split(" ") : [])].join("/");
  const lines = [
    `# ${tree.name} completion for fish: put it in ~/.config/fish/completions/${tree.name}.fish`,
    `function ${fn} --description 'the subcommands typed so far'`,
    "    set -l path root",
    "    for word in (commandline -opc)[2..-1]",
    "        set -l known",
    "        switch $path",
    ...[...paths(tree)].flatMap(([path, node]) =>
      node.commands.length > 0
        ? [
            `            case ${key(path)}`,
            `                set known ${node.commands.map((c) => c.name).join(" ")}`,
          ]
        : [],
    ),
    "        end",
    "        contains -- $word $known; and set path $path/$word",
    "    end",
    "    echo $path",
    "end",
  ];
  for (const [path, node] of paths(tree)) {
    const at = `'test (${fn}) = ${key(path)}'`;
    for (const sub of node.commands)
      lines.push(`complete -c ${tree.name} -f -n ${at} -a ${sub.name} -d ${fishQuote(sub.description)}`);
    if (node.values.length > 0)
      lines.push(`complete -c ${tree.name} -f -n ${at} -a ${fishQuote(node.values.join(" "))}`);
    for (const flag of node.flags) {
      const choices = flag.choices ? ` -r -f -a ${fishQuote(flag.choices.join(" "))}` : "";
      lines.push(
        `complete -c ${tree.name} -n ${at} -l ${flag.long.replace(/^--/, "")}${choices} -d ${fishQuote(flag.description)}`,
      );
    }
  }
  return `${lines.join("\n")}\n`;
}

// Every command with the path of subcommand names that leads to it ("" for the program).
function* paths(tree: CompletionTree, prefix = ""): Generator<[string, CompletionTree]> {
  yield [prefix, tree];
  for (const sub of tree.commands) yield* paths(sub, prefix ? `${prefix} ${sub.name}` : sub.name);
}

function firstLine(text: string): string {
  return (text.split("\n")[0] ?? "").slice(0, 200);
}

function identifier(name: string): string {
  return name.replace(/[^A-Za-z0-9_]/g, "_");
}

// Single-quoted for bash; a ' inside becomes '\''.
function quote(text: string): string {
  return `'${text.replace(/'/g, "'\\''")}'`;
}

// Single-quoted for fish, where \ and ' are escaped with \.
function fishQuote(text: string): string {
  return `'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
}
