import type { Finding } from "../reporter.js";
import type { RuleContext } from "./rule.js";

/**
 * The findings of a check that reads one object, remembered per object. A load with a parse cache
 * reuses the objects of the files that did not change, so a one-app change runs the check on that
 * app's objects and replays the rest: the cost of a load stops growing with the fleet for such
 * checks. The key must be the object the check reads; `inputs` are whatever else it reads (compared
 * by identity), and the findings are checked again when any of them differs.
 */
export class RememberedFindings {
  private readonly known = new WeakMap<
    object,
    { readonly inputs: readonly unknown[]; readonly findings: readonly Finding[] }
  >();

  check(
    context: RuleContext,
    key: object,
    run: (context: RuleContext) => void,
    inputs: readonly unknown[] = [],
  ): void {
    const known = this.known.get(key);
    let findings = known && sameInputs(known.inputs, inputs) ? known.findings : undefined;
    if (!findings) {
      const collected: Finding[] = [];
      run({ ...context, reporter: { ...context.reporter, report: (finding) => collected.push(finding) } });
      findings = collected;
      this.known.set(key, { inputs, findings });
    }
    for (const finding of findings) context.reporter.report(finding);
  }
}

function sameInputs(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((input, i) => input === b[i]);
}
