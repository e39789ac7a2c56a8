import { describe, expect, it } from "vitest";
import { cronStatusPath, hpaStatusPath, scaleDownStatusPath } from "../../src/status/autoscaling-files.js";
import { statusFileKind, writerOf } from "../../src/status/layout.js";
import { migrationStatusPath } from "../../src/status/migration-file.js";
import { agentReportPath } from "../../src/status/observed-status.js";
import { appStatusPath, clusterStatusPath, SOURCE_STATUS_PATH } from "../../src/status/status-files.js";
import { inventoryPath } from "../../src/sync/inventory.js";

/** Every file gitfleet writes on the status branch has one writer, named in status/layout.ts. */
describe("the status branch's layout", () => {
  it.each([
    [SOURCE_STATUS_PATH, "reconcile", false],
    [appStatusPath("web"), "reconcile", true],
    [clusterStatusPath("east"), "reconcile", true],
    ["rendered/east/shop/apps.Deployment.web.yaml", "reconcile", false],
    [inventoryPath("east"), "sync", false],
    [agentReportPath("north"), "agent", false],
    [migrationStatusPath("legacy"), "migrations", false],
    [hpaStatusPath("shop/web"), "autoscaling", false],
    [cronStatusPath("shop/nightly"), "autoscaling", false],
    [scaleDownStatusPath("shop/drain"), "autoscaling", false],
  ] as const)("%s is written by %s", (path, writer, observed) => {
    expect(writerOf(path)).toBe(writer);
    expect(statusFileKind(path)?.observedBySync ?? false).toBe(observed);
  });

  it.each([["README.md"], ["status/notes.txt"], ["renderedx/a.yaml"], ["status/source.yaml.bak"]])(
    "%s is no file of gitfleet's",
    (path) => {
      expect(writerOf(path)).toBeUndefined();
    },
  );
});
