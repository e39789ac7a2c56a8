import { explainInvalidLabelKey, explainInvalidLabelValue } from "../../apimachinery/names.js";
import type { LabelSelector, Labels, Origin } from "../types.js";
import { clusterAffinitiesOf } from "./affinities.js";
import type { Path, RuleContext } from "./rule.js";

/** Label selectors must be well-formed (keys, values, operators with or without values); cluster labels valid. */
export function checkLabelSelectors(context: RuleContext): void {
  const { model } = context;
  for (const { origin, metadata } of [...model.clusters, ...model.placements, ...model.overrides]) {
    checkLabels(context, origin, ["metadata", "labels"], metadata.labels);
  }
  for (const { origin, path, affinity } of clusterAffinitiesOf(model)) {
    if (affinity.labelSelector)
      checkSelector(context, origin, [...path, "labelSelector"], affinity.labelSelector);
  }
  for (const { origin, spec } of [...model.placements, ...model.overrides]) {
    for (const [i, selector] of (spec.resourceSelectors ?? []).entries()) {
      if (selector.labelSelector)
        checkSelector(
          context,
          origin,
          ["spec", "resourceSelectors", i, "labelSelector"],
          selector.labelSelector,
        );
    }
  }
}

/** Checks one label selector; exported for manifests' own selectors (Deployment spec.selector). */
export function checkSelector(
  context: RuleContext,
  origin: Origin,
  path: Path,
  selector: LabelSelector,
): void {
  checkLabels(context, origin, [...path, "matchLabels"], selector.matchLabels);
  selector.matchExpressions?.forEach((requirement, i) => {
    const at = [...path, "matchExpressions", i];
    const keyReason = explainInvalidLabelKey(requirement.key);
    if (keyReason)
      context.reporter.report({ origin, path: [...at, "key"], code: "INVALID_SELECTOR", message: keyReason });
    const values = requirement.values ?? [];
    const needsValues = requirement.operator === "In" || requirement.operator === "NotIn";
    if (needsValues && values.length === 0) {
      const message = `operator ${requirement.operator} needs at least one value in "values"`;
      context.reporter.report({ origin, path: [...at, "operator"], code: "INVALID_SELECTOR", message });
    }
    if (!needsValues && values.length > 0) {
      const message = `operator ${requirement.operator} takes no values; remove "values"`;
      context.reporter.report({
        origin,
        path: [...at, "values"],
        code: "INVALID_SELECTOR",
        message,
        target: "key",
      });
    }
    values.forEach((value, j) => {
      const reason = explainInvalidLabelValue(value);
      if (reason)
        context.reporter.report({
          origin,
          path: [...at, "values", j],
          code: "INVALID_SELECTOR",
          message: reason,
        });
    });
  });
}

function checkLabels(context: RuleContext, origin: Origin, path: Path, labels: Labels | undefined): void {
  for (const [key, value] of Object.entries(labels ?? {})) {
    const keyReason = explainInvalidLabelKey(key);
    const reason = keyReason ?? explainInvalidLabelValue(value);
    if (!reason) continue;
    context.reporter.report({
      origin,
      path: [...path, key],
      code: "INVALID_LABEL",
      message: reason,
      target: keyReason ? "key" : "value",
    });
  }
}
