import type { Override, Placement } from "../types.js";
import type { RuleContext } from "./rule.js";

/**
 * Warnings for selections that do nothing: a Placement or Override that selects no resource, a
 * resource selector that matches nothing (usually a typo), and an app that no Placement places.
 */
export function checkSelections(context: RuleContext): void {
  const { model, reporter, selections } = context;
  for (const object of [...model.placements, ...model.overrides]) checkSelection(context, object);
  for (const app of model.apps) {
    const [first] = app.resources;
    if (!first || app.resources.some((r) => selections.placementsOf(r).length > 0)) continue;
    reporter.report({
      origin: first.origin,
      path: [],
      severity: "warning",
      code: "NOT_PLACED",
      message: `app "${app.name}" is selected by no Placement, so it runs nowhere; add it to a placement's spec.apps`,
    });
  }
}

function checkSelection({ reporter, selections }: RuleContext, object: Placement | Override): void {
  const { spec, origin } = object;
  const selectsAll =
    object.kind === "Override" && spec.apps === undefined && spec.resourceSelectors === undefined;
  if (selectsAll) return;
  if (selections.selectedBy(spec).size === 0) {
    reporter.report({
      origin,
      path: ["metadata", "name"],
      severity: "warning",
      code: "SELECTS_NOTHING",
      message: `${object.kind} "${object.metadata.name}" selects no resource in apps/; check spec.apps and spec.resourceSelectors`,
    });
    return;
  }
  spec.resourceSelectors?.forEach((selector, i) => {
    if (selections.matchedBy(selector).length > 0) return;
    const what = `${selector.kind}${selector.name === undefined ? "" : ` ${selector.namespace ? `${selector.namespace}/` : ""}${selector.name}`}`;
    reporter.report({
      origin,
      path: ["spec", "resourceSelectors", i],
      severity: "warning",
      code: "SELECTS_NOTHING",
      message: `this selector matches no resource (${what}, apiVersion ${selector.apiVersion}); check its apiVersion, kind, namespace and name`,
    });
  });
}
