import { mkdir, rm, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { loadFleetWithBuilds } from "../../builds/load-with-builds.js";
import { formatValidationReport } from "../../load/summary.js";
import { formatRenderError } from "../../render/format-render.js";
import { renderFleet } from "../../render/render-fleet.js";
import { recordedObservations } from "../../revisions/plan-revisions.js";
import { readDirectoryTree } from "../../source/read-directory.js";
import { CliError, ExitCode, type ExitCodeValue } from "../exit-codes.js";
import type { CommandOutput } from "../output.js";
import { readSecretDigestKey } from "../secret-digest-key.js";

export interface RenderOptions {
  readonly out: string;
  readonly cluster?: readonly string[];
  readonly secretDigestKeyFile?: string;
  /** A checkout of the status branch whose recorded observations the render takes. */
  readonly status?: string;
}

export async function runRender(
  dir: string,
  options: RenderOptions,
  output: CommandOutput,
): Promise<ExitCodeValue> {
  const tree = await readDirectoryTree(dir).catch((error: unknown) => {
    throw new CliError(
      `cannot read fleet repo ${dir}: ${error instanceof Error && "code" in error ? String(error.code) : String(error)}`,
    );
  });
  // 1. Validate: an invalid repo renders nothing.
  const loaded = await loadFleetWithBuilds(tree);
  if (!loaded.model) {
    output.err(formatValidationReport(dir, loaded));
    return ExitCode.Failed;
  }
  // 2. Render, and refuse to write a partial tree when an override fails.
  const key = await readSecretDigestKey({ file: options.secretDigestKeyFile, env: process.env });
  const observations = options.status
    ? recordedObservations(await readStatusTree(options.status), loaded.model, [])
    : undefined;
  const rendered = renderFleet(loaded.model, {
    secretDigestKey: key.key,
    ...(observations ? { observations } : {}),
  });
  if (rendered.errors.length > 0) {
    output.err(`${rendered.errors.map((e) => formatRenderError(e)).join("\n")}\n`);
    return ExitCode.Failed;
  }
  const wanted = options.cluster;
  const unknown = (wanted ?? []).filter(
    (name) => !loaded.model?.clusters.some((c) => c.metadata.name === name),
  );
  if (unknown.length > 0) throw new CliError(`unknown cluster ${unknown.join(", ")}`, ExitCode.Usage);
  const objects = rendered.objects.filter((o) => wanted === undefined || wanted.includes(o.cluster));
  // 3. To stdout: one YAML stream, each object after a comment naming its file (as helm template does).
  if (options.out === "-") {
    output.out(objects.map((object) => `---\n# ${object.path}\n${object.text}`).join(""));
    return ExitCode.Ok;
  }
  // 4. Replace OUT/rendered with the new tree; every file stays inside it, whatever the objects are named.
  const root = resolve(options.out, "rendered");
  const outside = objects.find((o) => !isInside(root, resolve(options.out, o.path)));
  if (outside) throw new CliError(`refusing to write ${outside.path}: it is not inside ${root}`);
  await rm(root, { recursive: true, force: true });
  for (const object of objects) {
    const file = resolve(options.out, object.path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, object.text);
  }
  const clusters = new Set(objects.map((o) => o.cluster)).size;
  output.out(
    `rendered ${objects.length} objects for ${clusters} clusters into ${join(options.out, "rendered")}\n`,
  );
  return ExitCode.Ok;
}

async function readStatusTree(dir: string) {
  return readDirectoryTree(dir).catch((error: unknown) => {
    throw new CliError(
      `cannot read the status checkout ${dir}: ${error instanceof Error && "code" in error ? String(error.code) : String(error)}`,
    );
  });
}

// True when `path` is `root` or below it (both resolved).
function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
}
