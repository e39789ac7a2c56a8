import type { Problem, ProblemCode, Severity } from "./problem.js";
import type { Origin } from "./types.js";
import { type LocateTarget, locate, type SourceDocument } from "./yaml-source.js";

/** What a check says about one place in a document. */
export interface Finding {
  readonly origin: Origin;
  /** Path segments inside the document; the location falls back to the deepest existing node. */
  readonly path: readonly (string | number)[];
  readonly code: ProblemCode;
  readonly message: string;
  /** Default "error". */
  readonly severity?: Severity;
  /** Point at the key rather than the value (unknown or duplicated keys). Default "value". */
  readonly target?: LocateTarget;
}

/** Collects problems from checks and resolves model origins back to YAML positions. */
export interface Reporter {
  readonly problems: Problem[];
  /** Records a finding at its exact source position. */
  report(finding: Finding): void;
  /** "file:line" of a path in a document, for messages that name another place. */
  where(origin: Origin, path?: readonly (string | number)[]): string;
  /** Makes a document's positions available to later findings. */
  register(source: SourceDocument): void;
}

/** Creates an empty reporter. */
export function createReporter(): Reporter {
  const sources = new Map<string, SourceDocument>();
  const problems: Problem[] = [];
  const position = (origin: Origin, path: readonly (string | number)[], target: LocateTarget = "value") => {
    const source = sources.get(sourceKey(origin));
    return source ? locate(source, path, target) : { file: origin.file, line: 1, column: 1, path: "" };
  };
  return {
    problems,
    register(source) {
      sources.set(sourceKey(source), source);
    },
    report(finding) {
      const at = position(finding.origin, finding.path, finding.target);
      problems.push({
        ...at,
        severity: finding.severity ?? "error",
        code: finding.code,
        message: finding.message,
      });
    },
    where(origin, path = []) {
      const at = position(origin, path);
      return `${at.file}:${at.line}`;
    },
  };
}

function sourceKey(origin: Origin): string {
  return `${origin.index}:${origin.item ?? ""}:${origin.file}`;
}
