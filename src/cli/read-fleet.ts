import { loadFleetWithBuilds } from "../builds/load-with-builds.js";
import { formatValidationReport } from "../load/summary.js";
import type { FileTree } from "../model/file-tree.js";
import type { FleetModel } from "../model/types.js";
import { readDirectoryTree } from "../source/read-directory.js";
import { CliError } from "./exit-codes.js";
import type { CommandOutput } from "./output.js";

/** The fleet repo's work tree, read; a directory that cannot be read fails the command (exit 1). */
export function readFleetTree(dir: string): Promise<FileTree> {
  return readDirectoryTree(dir).catch((error: unknown) => {
    throw new CliError(
      `cannot read fleet repo ${dir}: ${(error as { code?: string }).code ?? String(error)}`,
    );
  });
}

/**
 * The fleet repo read and loaded, for a command that changes it: an invalid repo prints its problems
 * and fails the command (exit 1) saying what it would have done.
 */
export async function loadValidFleet(
  dir: string,
  output: CommandOutput,
  before: string,
): Promise<{ readonly tree: FileTree; readonly model: FleetModel }> {
  const tree = await readFleetTree(dir);
  const loaded = await loadFleetWithBuilds(tree);
  if (!loaded.model) {
    output.err(formatValidationReport(dir, loaded));
    throw new CliError(`the fleet repo ${dir} is invalid: fix it before ${before}`);
  }
  return { tree, model: loaded.model };
}
