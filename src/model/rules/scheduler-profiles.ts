import { profilePluginNames } from "../scheduler-plugins.js";
import type { RuleContext } from "./rule.js";

/** Every scheduler profile in fleet.yaml must build: known plugin names, none enabled twice. */
export function checkSchedulerProfiles({ model, reporter }: RuleContext): void {
  const fleet = model.fleet;
  for (const [i, profile] of (fleet?.spec.schedulerProfiles ?? []).entries()) {
    const result = profilePluginNames(profile);
    if (result.ok || !fleet) continue;
    reporter.report({
      origin: fleet.origin,
      path: ["spec", "schedulerProfiles", i, "plugins"],
      code: "INVALID_FIELD_COMBINATION",
      message: result.error,
    });
  }
}
