import { explainInvalidFleetName } from "../../apimachinery/names.js";
import type { RuleContext } from "./rule.js";

/** clusters/<name>.yaml holds the cluster <name>; apps/<app>/ is a valid app name and app.yaml agrees. */
export function checkFileNames({ model, reporter }: RuleContext): void {
  for (const cluster of model.clusters) {
    const expected = cluster.origin.file.replace(/^clusters\//, "").replace(/\.ya?ml$/, "");
    if (expected === cluster.metadata.name) continue;
    reporter.report({
      origin: cluster.origin,
      path: ["metadata", "name"],
      code: "NAME_MISMATCH",
      message: `cluster "${cluster.metadata.name}" must be defined in clusters/${cluster.metadata.name}.yaml; rename the file or the cluster`,
    });
  }
  for (const app of model.apps) {
    const reason = explainInvalidFleetName(app.name);
    const first = app.resources[0]?.origin ?? app.definition?.origin;
    if (reason && first) {
      reporter.report({
        origin: first,
        path: [],
        code: "INVALID_NAME",
        message: `app directory apps/${app.name}/: ${reason}`,
      });
    }
    const definition = app.definition;
    if (definition && definition.metadata.name !== app.name) {
      reporter.report({
        origin: definition.origin,
        path: ["metadata", "name"],
        code: "NAME_MISMATCH",
        message: `the App in apps/${app.name}/ must be named "${app.name}" (got "${definition.metadata.name}")`,
      });
    }
  }
}
