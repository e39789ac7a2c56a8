import { matchesResourceSelector, selectsResource } from "../label-selector.js";
import type { Override, Placement, Resource } from "../types.js";
import type { RuleContext } from "./rule.js";

/**
 * Warnings for selections that do nothing: a Placement or Override that selects no resource, a
 * resource selector that matches nothing (usually a typo), and an app that no Placement places.
 */
export function checkSelections(context: RuleContext): void {
  const { model, reporter } = context;
  const resources = model.apps.flatMap((app) => app.resources);
  for (const object of [...model.placements, ...model.overrides]) checkSelection(context, object, resources);
  for (const app of model.apps) {
    const [first] = app.resources;
    if (!first || app.resources.some((r) => model.placements.some((p) => selectsResource(p.spec, r))))
      continue;
    reporter.report({
      origin: first.origin,
      path: [],
      severity: "warning",
      code: "NOT_PLACED",
      message: `app "${app.name}" is selected by no Placement, so it runs nowhere; add it to a placement's spec.apps`,
    });
  }
}

function checkSelection(
  { reporter }: RuleContext,
  object: Placement | Override,
  resources: readonly Resource[],
): void {
  const { spec, origin } = object;
  const selectsAll =
    object.kind === "Override" && spec.apps === undefined && spec.resourceSelectors === undefined;
  if (selectsAll) return;
  if (!resources.some((resource) => selectsResource(spec, resource))) {
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
    if (resources.some((resource) => matchesResourceSelector(selector, resource))) return;
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
