import { groupKind, groupOf } from "../kinds.js";
import type { ResourceInterpreter } from "../types.js";
import type { RuleContext } from "./rule.js";

/** One ResourceInterpreter per kind: two for the same group and kind would make behaviour depend on names. */
export function checkInterpreters({ model, reporter }: RuleContext): void {
  const seen = new Map<string, ResourceInterpreter>();
  for (const interpreter of model.interpreters) {
    const { apiVersion, kind } = interpreter.spec.target;
    const key = groupKind(groupOf(apiVersion), kind);
    const earlier = seen.get(key);
    if (!earlier) {
      seen.set(key, interpreter);
      continue;
    }
    reporter.report({
      origin: interpreter.origin,
      path: ["spec", "target"],
      code: "DUPLICATE_NAME",
      message: `${kind} (group ${groupOf(apiVersion) || "core"}) already has the interpreter "${earlier.metadata.name}" at ${reporter.where(earlier.origin)}; keep one`,
    });
  }
}
