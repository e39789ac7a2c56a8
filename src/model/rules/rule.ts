import type { LoadPolicy } from "../load-policy.js";
import type { Reporter } from "../reporter.js";
import type { SelectionIndex } from "../selection-index.js";
import type { FleetModel, GitfleetKind } from "../types.js";

/** Names declared per kind, including objects that failed validation (so references to them do not cascade). */
export type DeclaredNames = ReadonlyMap<GitfleetKind, ReadonlySet<string>>;

/** What every cross-file rule sees: the assembled model, where to report, and every declared name. */
export interface RuleContext {
  readonly model: FleetModel;
  readonly reporter: Reporter;
  readonly declared: DeclaredNames;
  readonly selections: SelectionIndex;
  /** What the operator bounds and allows (flags, never the repo). */
  readonly policy: LoadPolicy;
}

/** A cross-file rule: reads the model, reports findings, returns nothing. */
export type Rule = (context: RuleContext) => void;

/** A path inside a document, as segments. */
export type Path = readonly (string | number)[];
