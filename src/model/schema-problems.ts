import { valueAt } from "../apimachinery/json.js";
import { STRING_FORMATS } from "./formats.js";
import type { Problem } from "./problem.js";
import { fromJsonPointer } from "./problem.js";
import type { SchemaError } from "./schemas.js";
import { type LocateTarget, locate, type SourceDocument } from "./yaml-source.js";

/** Turns ajv errors into problems a person can act on, each pointing at the offending YAML node. */
export function schemaProblems(source: SourceDocument, errors: readonly SchemaError[]): Problem[] {
  return errors.flatMap((error) => {
    const worded = wordError(error, source.value);
    if (!worded) return [];
    const segments = [
      ...fromJsonPointer(error.instancePath),
      ...(worded.child === undefined ? [] : [worded.child]),
    ];
    const at = locate(source, segments, worded.target);
    return [
      {
        ...at,
        path: error.instancePath + (worded.child === undefined ? "" : `/${escapePointer(worded.child)}`),
        severity: "error" as const,
        code: worded.code,
        message: worded.message,
      },
    ];
  });
}

interface WordedError {
  readonly message: string;
  readonly code: Problem["code"];
  /** The property the error is about, when it is a child of instancePath (missing or unknown fields). */
  readonly child?: string;
  readonly target: LocateTarget;
}

function wordError(error: SchemaError, root: unknown): WordedError | undefined {
  const value = valueAt(root, fromJsonPointer(error.instancePath));
  const params = error.params as Record<string, unknown>;
  const description = (error.parentSchema as { description?: string } | undefined)?.description;
  const plain = (message: string): WordedError => ({ message, code: "SCHEMA_VIOLATION", target: "value" });
  switch (error.keyword) {
    case "required": {
      const field = String(params.missingProperty);
      return {
        message: `missing required field "${field}"`,
        code: "MISSING_FIELD",
        child: field,
        target: "key",
      };
    }
    case "additionalProperties": {
      const field = String(params.additionalProperty);
      const allowed = Object.keys(
        (error.parentSchema as { properties?: object } | undefined)?.properties ?? {},
      );
      return {
        message: `unknown field "${field}"${suggest(field, allowed)}`,
        code: "SCHEMA_VIOLATION",
        child: field,
        target: "key",
      };
    }
    case "enum":
      return plain(
        `must be one of ${(params.allowedValues as unknown[]).join(", ")} (got ${describe(value)})`,
      );
    case "const":
      return plain(`must be ${JSON.stringify(params.allowedValue)} (got ${describe(value)})`);
    case "type":
      return plain(`must be ${typeNames(String(params.type))} (got ${describe(value)})`);
    case "format":
      return plain(explainFormat(String(params.format), value));
    case "minimum":
    case "maximum":
      return plain(
        `must be ${error.keyword === "minimum" ? "at least" : "at most"} ${String(params.limit)} (got ${describe(value)})`,
      );
    case "minItems":
      return plain(`must have at least ${String(params.limit)} item${params.limit === 1 ? "" : "s"}`);
    case "minLength":
      return plain("must not be empty");
    case "uniqueItems": {
      const list = Array.isArray(value) ? value : [];
      return plain(
        `lists ${describe(list[Number(params.i)])} twice (items ${String(params.i)} and ${String(params.j)})`,
      );
    }
    case "minProperties":
      return plain(
        `must set at least one of: ${Object.keys((error.parentSchema as { properties?: object })?.properties ?? {}).join(", ")}`,
      );
    case "pattern":
      return plain(
        `${describe(value)} is not valid: expected ${expectation(description) ?? `a value matching ${String(params.pattern)}`}`,
      );
    default:
      return plain(error.message ?? `is invalid (${error.keyword})`);
  }
}

function explainFormat(format: string, value: unknown): string {
  const known = STRING_FORMATS.find((f) => f.name === format);
  const reason = typeof value === "string" ? known?.explain(value) : undefined;
  return reason ?? `must be a valid ${format}`;
}

function typeNames(types: string): string {
  const names: Record<string, string> = {
    string: "a string",
    integer: "a whole number",
    number: "a number",
    boolean: "true or false",
    object: "a mapping",
    array: "a list",
    null: "null",
  };
  return types
    .split(",")
    .map((t) => names[t] ?? t)
    .join(" or ");
}

/** Describes a value for a message: strings quoted, collections named, long values cut. */
export function describe(value: unknown): string {
  if (value === null || value === undefined) return "nothing";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  if (typeof value === "string")
    return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  return String(value);
}

function escapePointer(segment: string): string {
  return segment.replaceAll("~", "~0").replaceAll("/", "~1");
}

/** " (did you mean X?)" when a known name is close to the unknown one (2 edits, more for long names). */
export function suggest(word: string, candidates: readonly string[]): string {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(word.length / 4)) + 1;
  for (const candidate of candidates) {
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best === undefined ? "" : ` (did you mean "${best}"?)`;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

// "A dotted field path such as x." → "a dotted field path such as x": a description read as an expectation.
function expectation(description: string | undefined): string | undefined {
  if (description === undefined) return undefined;
  const sentence = description.split(/\.(\s|$)/)[0] ?? description;
  return sentence.charAt(0).toLowerCase() + sentence.slice(1);
}
