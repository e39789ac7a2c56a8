import nodeFs from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { createTwoFilesPatch } from "diff";
import git from "isomorphic-git";
import { CliError } from "./exit-codes.js";
import type { CommandOutput } from "./output.js";

/** How a command that writes fleet repo files delivers them: a commit on the checked-out branch, or a patch on stdout. */
export type Delivery = "commit" | "patch";

/**
 * Delivers files a command made for the fleet repo (paths relative to its root, each checked to stay
 * inside it): `commit` writes them into the work tree and commits exactly them on the branch checked
 * out (refused while other changes are staged, so nothing of the user's is swept in); `patch` changes
 * nothing and prints a patch `git apply` takes, for a pull request made elsewhere.
 */
export async function deliverFleetChange(
  repo: string,
  files: ReadonlyMap<string, string>,
  message: string,
  delivery: Delivery,
  output: CommandOutput,
): Promise<void> {
  for (const path of files.keys()) checkRepoPath(path);
  const changed = new Map<string, { before: string | undefined; after: string }>();
  for (const [path, after] of files) {
    const before = await readFile(join(repo, path), "utf8").catch(() => undefined);
    if (before !== after) changed.set(path, { before, after });
  }
  if (delivery === "patch") {
    for (const [path, { before, after }] of changed) output.out(patchOf(path, before, after));
    return;
  }
  if (changed.size === 0) {
    output.err(
      `gitfleet: ${repo} already holds ${[...files.keys()].join(", ")} as written: nothing to commit\n`,
    );
    return;
  }
  const sha = await commitFiles(
    repo,
    new Map([...changed].map(([path, { after }]) => [path, after])),
    message,
  );
  output.err(
    `gitfleet: committed ${changed.size} file(s) as ${sha.slice(0, 12)}: ${message.split("\n")[0]}\n`,
  );
}

// Writes the files into the work tree and commits exactly them, refusing while anything else is staged.
async function commitFiles(
  repo: string,
  files: ReadonlyMap<string, string>,
  message: string,
): Promise<string> {
  const others = (await stagedPaths(repo)).filter((path) => !files.has(path));
  if (others.length > 0)
    throw new CliError(
      `${repo} has other staged changes (${others.slice(0, 3).join(", ")}${others.length > 3 ? ", …" : ""}): commit or unstage them first, or use --patch`,
    );
  for (const [path, text] of files) {
    await mkdir(dirname(join(repo, path)), { recursive: true });
    await writeFile(join(repo, path), text);
    await git.add({ fs: nodeFs, dir: repo, filepath: path });
  }
  try {
    return await git.commit({ fs: nodeFs, dir: repo, message });
  } catch (error) {
    if ((error as { code?: string }).code === "MissingNameError")
      throw new CliError(`cannot commit in ${repo}: set git's user.name and user.email, or use --patch`);
    throw error;
  }
}

// Paths the command built from names it validated; checked again here, as any path about to be written.
function checkRepoPath(path: string): void {
  if (path.startsWith("/") || path.split("/").some((part) => part === "" || part === "." || part === ".."))
    throw new Error(`refusing to write ${JSON.stringify(path)} outside the fleet repo`);
}

async function stagedPaths(repo: string): Promise<string[]> {
  try {
    const matrix = await git.statusMatrix({ fs: nodeFs, dir: repo });
    // [path, HEAD, workdir, stage]: staged when the index differs from HEAD.
    return matrix.filter(([, head, , stage]) => stage !== head).map(([path]) => path);
  } catch (error) {
    throw new CliError(`${repo} is not a Git work tree: ${(error as Error).message}`);
  }
}

// A file's patch with git's headers, so `git apply` creates new files with their mode.
function patchOf(path: string, before: string | undefined, after: string): string {
  const body = createTwoFilesPatch(
    before === undefined ? "/dev/null" : `a/${path}`,
    `b/${path}`,
    before ?? "",
    after,
    undefined,
    undefined,
    { context: 3 },
  )
    .split("\n")
    .slice(1)
    .join("\n");
  return `diff --git a/${path} b/${path}\n${before === undefined ? "new file mode 100644\n" : ""}${body}`;
}
