import { groupKind, groupOf } from "../../apimachinery/kinds.js";
import { findDuplicates } from "./find-duplicates.js";
import type { RuleContext } from "./rule.js";

/** One ResourceInterpreter per kind: two for the same group and kind would make behaviour depend on names. */
export function checkInterpreters({ model, reporter }: RuleContext): void {
  const keyOf = ({ spec }: (typeof model.interpreters)[number]) =>
    groupKind(groupOf(spec.target.apiVersion), spec.target.kind);
  for (const { item, earlier } of findDuplicates(model.interpreters, keyOf)) {
    const { apiVersion, kind } = item.spec.target;
    reporter.report({
      origin: item.origin,
      path: ["spec", "target"],
      code: "DUPLICATE_NAME",
      message: `${kind} (group ${groupOf(apiVersion) || "core"}) already has the interpreter "${earlier.metadata.name}" at ${reporter.where(earlier.origin)}; keep one`,
    });
  }
}
