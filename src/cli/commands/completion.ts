import { Argument, type Command } from "commander";
import { completionScript, completionTree, SHELLS, type Shell } from "../completion.js";
import type { CommandOutput } from "../output.js";

/** `gitfleet completion <shell>`: the shell's completion script for every command, flag and choice. */
export function registerCompletion(program: Command, output: CommandOutput): void {
  program
    .command("completion")
    .description(
      "print the completion script for bash, zsh or fish: in ~/.bashrc, source <(gitfleet completion bash); in ~/.zshrc after compinit, source <(gitfleet completion zsh); for fish, gitfleet completion fish > ~/.config/fish/completions/gitfleet.fish",
    )
    .addArgument(new Argument("<shell>", "bash, zsh or fish").choices(SHELLS))
    .action((shell: Shell) => {
      output.out(completionScript(completionTree(program), shell));
    });
}
