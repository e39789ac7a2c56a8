import { isPrototypeKey } from "./json.js";

// A JSONPath template as kubectl's -o jsonpath and Karmada's statePreservation write one value:
// "{ .jobStatus.id }", "{.checkpoints['latest']}", "{.conditions[0].reason}". Only one path of field
// names, quoted keys and list indexes: no filters, wildcards, ranges or recursive descent, so reading
// it costs at most one step per segment. Pure.

/** One step: a field name or a list index. */
export type PathSegment = string | number;

const TEMPLATE = /^\{\s*(.*?)\s*\}$/s;
const STEP = /^(?:\.([A-Za-z0-9_-]+)|\[(\d{1,6})\]|\['([^'\\]{1,253})'\]|\["([^"\\]{1,253})"\])/;

/** The path's segments, or why it cannot be read. */
export function parseJsonPath(template: string): { segments: PathSegment[] } | { error: string } {
  const inner = TEMPLATE.exec(template)?.[1];
  if (inner === undefined) return { error: 'write it as one path in braces, like "{ .jobStatus.id }"' };
  let rest = inner.startsWith("$") ? inner.slice(1) : inner;
  const segments: PathSegment[] = [];
  while (rest.length > 0) {
    const match = STEP.exec(rest);
    if (!match) return { error: `cannot read "${rest}": use .field, ['key'] or [index] steps only` };
    const [step, field, index, single, double] = match;
    const segment = index !== undefined ? Number(index) : (field ?? single ?? double ?? "");
    if (typeof segment === "string" && isPrototypeKey(segment))
      return { error: `"${segment}" is not a field gitfleet reads` };
    segments.push(segment);
    rest = rest.slice(step.length);
  }
  if (segments.length === 0) return { error: "the path names no field" };
  if (segments.length > 32) return { error: "the path has more than 32 steps" };
  return { segments };
}

/** Why a template cannot be read, or undefined when it can (for schema validation). */
export function explainInvalidJsonPath(template: string): string | undefined {
  const parsed = parseJsonPath(template);
  return "error" in parsed ? `"${template}": ${parsed.error}` : undefined;
}

/** The value the path reaches as text (strings as they are, numbers and booleans printed), or undefined. */
export function readJsonPath(value: unknown, segments: readonly PathSegment[]): string | undefined {
  let at: unknown = value;
  for (const segment of segments) {
    if (typeof segment === "number") at = Array.isArray(at) ? at[segment] : undefined;
    else
      at =
        at !== null && typeof at === "object" && !Array.isArray(at) && Object.hasOwn(at, segment)
          ? (at as Record<string, unknown>)[segment]
          : undefined;
    if (at === undefined) return undefined;
  }
  if (typeof at === "string") return at;
  if (typeof at === "number" || typeof at === "boolean") return String(at);
  return undefined;
}
