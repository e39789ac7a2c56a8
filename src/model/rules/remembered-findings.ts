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

  /** `name` tells this check's findings apart from others' when they are kept (rememberedFor). */
  constructor(readonly name: string) {
    if (checks.has(name)) throw new Error(`two remembered checks are named ${name}`);
    checks.set(name, this);
  }

  /** What is remembered for `key`, when its inputs are plain values (a copy can match them again). */
  entryFor(key: object): RememberedEntry | undefined {
    const known = this.known.get(key);
    if (!known?.inputs.every(isPlain)) return undefined;
    return [this.name, known.inputs, known.findings];
  }

  /** Remembers findings for `key` again (from a copy: a snapshot). */
  restore(key: object, inputs: readonly unknown[], findings: readonly Finding[]): void {
    this.known.set(key, { inputs, findings });
  }

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

/** One check's findings for an object: the check's name, what else it read, what it found. */
export type RememberedEntry = readonly [
  check: string,
  inputs: readonly unknown[],
  findings: readonly Finding[],
];

const checks = new Map<string, RememberedFindings>();

/**
 * Every check's remembered findings for an object, as plain data: a snapshot keeps them with the
 * object (a parse cache's read), so that a restarted process replays them rather than checking every
 * object of the fleet again. Findings whose inputs are objects (a CRD's schema) are left out: a copy
 * of the input would never be the same object, so they are checked again anyway.
 */
export function rememberedFor(key: object): RememberedEntry[] {
  const entries: RememberedEntry[] = [];
  for (const check of checks.values()) {
    const entry = check.entryFor(key);
    if (entry) entries.push(entry);
  }
  return entries;
}

/** Remembers again, for a copy of an object, what rememberedFor gave for the original. */
export function rememberAgain(key: object, entries: readonly RememberedEntry[]): void {
  for (const [name, inputs, findings] of entries) checks.get(name)?.restore(key, inputs, findings);
}

function isPlain(input: unknown): boolean {
  return input === null || (typeof input !== "object" && typeof input !== "function");
}

function sameInputs(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((input, i) => input === b[i]);
}
