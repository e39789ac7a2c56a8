import { prototypeKeyPaths } from "../apimachinery/json.js";
import { KIND_DIRECTORY } from "./classify.js";
import type { Reporter } from "./reporter.js";
import { schemaProblems } from "./schema-problems.js";
import { schemaValidator } from "./schemas.js";
import type { GitfleetKind, Origin } from "./types.js";
import type { SourceDocument } from "./yaml-source.js";

/** A gitfleet object that passed its schema, still untyped beyond its kind. */
export interface CheckedObject {
  readonly kind: GitfleetKind;
  readonly value: Readonly<Record<string, unknown>>;
  readonly origin: Origin;
}

/** What reading one gitfleet document produced: the object when valid, and its name either way. */
export interface ReadResult {
  readonly object: CheckedObject | undefined;
  /** The declared kind and name, even when the object is invalid, so references to it do not cascade. */
  readonly declared: { readonly kind: GitfleetKind; readonly name: string } | undefined;
}

/**
 * Checks one document from a gitfleet directory: a mapping, of a kind that belongs in that directory,
 * valid against the kind's schema. Problems go to the reporter; nothing throws.
 */
export function readGitfleetObject(
  source: SourceDocument,
  allowed: readonly GitfleetKind[],
  reporter: Reporter,
): ReadResult {
  const origin = { file: source.file, index: source.index };
  const value = source.value;
  if (!isRecord(value)) {
    reporter.report({
      origin,
      path: [],
      code: "NOT_AN_OBJECT",
      message: `expected ${withArticle(allowed.join(" or "))} object (a mapping), got ${kindOfValue(value)}`,
    });
    return { object: undefined, declared: undefined };
  }
  const kind = pickKind(value.kind, allowed);
  if (kind === undefined) {
    reportWrongKind(value.kind, allowed, origin, reporter);
    return { object: undefined, declared: undefined };
  }
  const name =
    isRecord(value.metadata) && typeof value.metadata.name === "string" ? value.metadata.name : undefined;
  const declared = name === undefined ? undefined : { kind, name };
  // Keys that reach JavaScript's object prototype are refused in every gitfleet object, at any depth:
  // merge patches, label maps and selectors are walked and written by key.
  const forbidden = prototypeKeyPaths(value);
  for (const path of forbidden)
    reporter.report({
      origin,
      path,
      code: "FORBIDDEN_KEY",
      message: `the key "${String(path.at(-1))}" is not allowed: it reaches JavaScript's object prototype; remove or rename it`,
      target: "key",
    });
  if (forbidden.length > 0) return { object: undefined, declared };
  const errors = schemaValidator(kind)(value);
  if (errors.length > 0) {
    reporter.problems.push(...schemaProblems(source, errors));
    return { object: undefined, declared };
  }
  return { object: { kind, value, origin }, declared };
}

function pickKind(kind: unknown, allowed: readonly GitfleetKind[]): GitfleetKind | undefined {
  if (kind === undefined && allowed.length === 1) return allowed[0];
  return allowed.find((candidate) => candidate === kind);
}

function reportWrongKind(
  kind: unknown,
  allowed: readonly GitfleetKind[],
  origin: Origin,
  reporter: Reporter,
): void {
  if (kind === undefined) {
    reporter.report({
      origin,
      path: ["kind"],
      code: "MISSING_FIELD",
      message: `missing required field "kind" (one of ${allowed.join(", ")})`,
      target: "key",
    });
    return;
  }
  const home = Object.entries(KIND_DIRECTORY).find(([candidate]) => candidate === kind)?.[1];
  const hint = home ? `; move this document to ${home}/` : "";
  reporter.report({
    origin,
    path: ["kind"],
    code: "WRONG_KIND",
    message: `${placeOf(origin.file)} holds ${allowed.join(" and ")} objects (got kind ${JSON.stringify(kind)})${hint}`,
  });
}

// "clusters/" for a file in a kind directory, the file's own name for fleet.yaml and app.yaml.
function placeOf(file: string): string {
  const parts = file.split("/");
  return parts[0] === "apps" || parts.length === 1 ? (parts.at(-1) ?? file) : `${parts[0]}/`;
}

/** True for a plain mapping (not a list, not null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Names the shape of a value for messages. */
export function kindOfValue(value: unknown): string {
  if (value === null || value === undefined) return "nothing";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  return `a ${typeof value}`;
}

function withArticle(noun: string): string {
  return `${/^[AEIOU]/.test(noun) ? "an" : "a"} ${noun}`;
}
