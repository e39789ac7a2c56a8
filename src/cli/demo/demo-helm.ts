import { spawnSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { HELM_VERSION, helmEnvironment } from "../../helm/helm-environment.js";
import type { CommandOutput } from "../output.js";

const BUILD_HELM = fileURLToPath(new URL("../../../../scripts/build-helm.sh", import.meta.url));
/** The example fleet's Helm app and its Placement. */
const HELM_APP = ["apps/status-page", "placements/status-page.yaml"];

/**
 * The demo's example fleet has a Helm app. Without helm on the PATH (or GITFLEET_HELM), helm is built
 * once from Go modules when Go is installed (scripts/build-helm.sh caches it); failing that, the Helm
 * app is left out of the demo's copy of the fleet, and the demo says so.
 */
export function prepareDemoHelm(repoDir: string, output: CommandOutput): void {
  if (helmEnvironment().binary) return;
  const go = spawnSync("go", ["version"], { stdio: "ignore" });
  if (go.status === 0 && existsSync(BUILD_HELM)) {
    output.err(
      `gitfleet demo: building helm ${HELM_VERSION} from Go modules for the example's Helm app (once)\n`,
    );
    spawnSync("bash", [BUILD_HELM], { stdio: ["ignore", "ignore", "inherit"] });
    if (helmEnvironment().binary) return;
  }
  for (const path of HELM_APP) rmSync(join(repoDir, path), { recursive: true, force: true });
  output.out(
    "gitfleet demo: helm was not found, so the example's Helm app (apps/status-page) is left out; put helm on the PATH or run scripts/build-helm.sh to include it\n",
  );
}
