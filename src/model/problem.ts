import { compareStrings } from "./file-tree.js";

/** How bad a problem is: errors block a reconcile, warnings do not. */
export type Severity = "error" | "warning";

/** Stable machine-readable problem codes; docs/commands.md lists what each means. */
export type ProblemCode =
  | "NOT_UTF8"
  | "YAML_SYNTAX"
  | "NOT_AN_OBJECT"
  | "FORBIDDEN_KEY"
  | "TOO_LARGE"
  | "WRONG_KIND"
  | "SCHEMA_VIOLATION"
  | "MISSING_FIELD"
  | "INVALID_NAME"
  | "NAME_MISMATCH"
  | "DUPLICATE_NAME"
  | "DUPLICATE_RESOURCE"
  | "DUPLICATE_MEMBER"
  | "UNKNOWN_REFERENCE"
  | "PRIORITY_TIE"
  | "INVALID_LABEL"
  | "INVALID_SELECTOR"
  | "INVALID_QUANTITY"
  | "INVALID_FIELD_COMBINATION"
  | "SELECTS_NOTHING"
  | "NOT_PLACED"
  | "SCOPE_MISMATCH"
  | "INVALID_SECRET_DATA"
  | "UNUSED_FILE"
  | "REPLICAS_UNDER_AUTOSCALER"
  | "HOST_MOVED_WITHOUT_RESTORE"
  | "RENDER_FAILED"
  | "DEPENDENCY_CYCLE"
  | "INVALID_ANNOTATION"
  | "FORBIDDEN_HOOK"
  | "TOO_MANY_OBJECTS"
  | "HELM_RENDER_FAILED"
  | "QUOTA_EXCEEDED"
  | "OUTSIDE_TEAM_BOUNDS"
  | "SOPS_FORMAT"
  | "SOPS_RECIPIENTS"
  | "TEAM_SOURCE";

/** A place in the fleet repo: a file, a 1-based line and column, and a JSON pointer inside the document. */
export interface SourceLocation {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  /** JSON pointer into the YAML document, "" for the document itself. */
  readonly path: string;
}

/** One thing wrong with the fleet repo, located precisely enough to fix without searching. */
export interface Problem extends SourceLocation {
  readonly severity: Severity;
  readonly code: ProblemCode;
  /** What is wrong and, where it helps, what to do: no location, no code. */
  readonly message: string;
}

/** Formats a problem compiler-style: `file:line:col: error: /json/path: message [CODE]`. */
export function formatProblem(problem: Problem): string {
  const where = problem.path === "" ? "" : `${problem.path}: `;
  return `${problem.file}:${problem.line}:${problem.column}: ${problem.severity}: ${where}${problem.message} [${problem.code}]`;
}

/** Orders problems by file, line, column, then message, so output never depends on rule order. */
export function compareProblems(a: Problem, b: Problem): number {
  return (
    compareStrings(a.file, b.file) ||
    a.line - b.line ||
    a.column - b.column ||
    compareStrings(a.message, b.message) ||
    compareStrings(a.code, b.code)
  );
}

/** Sorts problems and drops exact duplicates (the same problem found twice by overlapping checks). */
export function normalizeProblems(problems: readonly Problem[]): Problem[] {
  const seen = new Set<string>();
  const out: Problem[] = [];
  for (const problem of [...problems].sort(compareProblems)) {
    const key = formatProblem(problem);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(problem);
  }
  return out;
}

/** True when any problem is an error. */
export function hasErrors(problems: readonly Problem[]): boolean {
  return problems.some((problem) => problem.severity === "error");
}

/** Encodes path segments as a JSON pointer (RFC 6901). */
export function toJsonPointer(segments: readonly (string | number)[]): string {
  return segments.map((s) => `/${String(s).replaceAll("~", "~0").replaceAll("/", "~1")}`).join("");
}

/** Decodes a JSON pointer (RFC 6901) into its segments. */
export function fromJsonPointer(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~"));
}
