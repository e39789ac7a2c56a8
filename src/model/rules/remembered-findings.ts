import type { Finding } from "../reporter.js";
import type { RuleContext } from "./rule.js";

/**
 * The findings of a check that reads one object and nothing else, remembered per object. A load with
 * a parse cache reuses the objects of the files that did not change, so a one-app change runs the
 * check on that app's objects and replays the rest: the cost of a load stops growing with the fleet
 * for such checks. The key must be the object the check reads, and the check must read nothing the
 * key does not hold.
 */
export class RememberedFindings {
  private readonly known = new WeakMap<object, readonly Finding[]>();

  check(context: RuleContext, key: object, run: (context: RuleContext) => void): void {
    let findings = this.known.get(key);
    if (!findings) {
      const collected: Finding[] = [];
      run({ ...context, reporter: { ...context.reporter, report: (finding) => collected.push(finding) } });
      findings = collected;
      this.known.set(key, findings);
    }
    for (const finding of findings) context.reporter.report(finding);
  }
}
