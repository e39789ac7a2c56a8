import type { Command } from "commander";
import type { RenderOptions } from "../actions/render.js";
import { type BuildFlags, configureBuildsFrom, withBuildOptions } from "../build-flags.js";
import type { ExitCodeValue } from "../exit-codes.js";
import type { CommandOutput } from "../output.js";
import { SECRET_DIGEST_KEY_ENV } from "../secret-digest-key.js";

/** `gitfleet render [DIR] --out OUT [--cluster NAME…]`: write what every cluster gets, as the status branch will hold it. */
export function registerRender(
  program: Command,
  output: CommandOutput,
  setExit: (code: ExitCodeValue) => void,
): void {
  const command = program.command("render");
  withBuildOptions(command)
    .description(
      "render the objects each cluster gets (replicas, overrides, tracking, Secret values left out) into OUT/rendered/",
    )
    .argument("[dir]", "the fleet repo directory", ".")
    .requiredOption(
      "--out <dir>",
      "where to write rendered/<cluster>/<namespace|_cluster>/<group>.<kind>.<name>.yaml; - prints one YAML stream to stdout instead (with --cluster, what kubectl apply -f - takes)",
    )
    .option("--cluster <name...>", "only these clusters")
    .option(
      "--status <dir>",
      "a checkout of the status branch: render with the capacity and autoscaled totals it recorded",
    )
    .option(
      "--secret-digest-key-file <file>",
      `the fleet's key for Secrets' value digests (default: ${SECRET_DIGEST_KEY_ENV}, else a key for this run only)`,
    )
    .action(async (dir: string, options: RenderOptions & BuildFlags) => {
      configureBuildsFrom(options);
      setExit(await (await import("../actions/render.js")).runRender(dir, options, output));
    });
}
