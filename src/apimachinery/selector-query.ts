import { matchesRequirement } from "./label-selector.js";

/** A parsed `labelSelector` or `fieldSelector` query: every requirement must hold. */
export type Requirements = readonly {
  readonly key: string;
  readonly operator: string;
  readonly values: readonly string[];
}[];

/**
 * Parses a label selector in the API's query syntax: `a=b`, `a==b`, `a!=b`, `a in (x,y)`,
 * `a notin (x)`, `a`, `!a`, joined by commas. Throws with a message for anything else (the server
 * answers 400, as a real one does).
 */
export function parseLabelSelectorQuery(text: string): Requirements {
  return splitOutside(text, ",")
    .map((part) => part.trim())
    .filter((term) => term !== "")
    .map(parseLabelTerm);
}

function parseLabelTerm(term: string): Requirements[number] {
  const set = /^([^\s!=(),]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term);
  if (set) {
    const values = (set[3] ?? "")
      .split(",")
      .map((v) => v.trim())
      .filter(Boolean);
    return { key: set[1] as string, operator: set[2] === "in" ? "In" : "NotIn", values };
  }
  const equality = /^([^\s!=(),]+)\s*(==|=|!=)\s*([^\s!=(),]*)$/.exec(term);
  if (equality)
    return {
      key: equality[1] as string,
      operator: equality[2] === "!=" ? "NotIn" : "In",
      values: [equality[3] ?? ""],
    };
  const exists = /^(!?)([^\s!=(),]+)$/.exec(term);
  if (exists)
    return { key: exists[2] as string, operator: exists[1] ? "DoesNotExist" : "Exists", values: [] };
  throw new Error(`unable to parse requirement: "${term}"`);
}

/** Parses a field selector: `metadata.name=x`, `metadata.namespace!=y`, comma-joined; only the fields given are allowed. */
export function parseFieldSelectorQuery(text: string, fields: readonly string[]): Requirements {
  const requirements: { key: string; operator: string; values: string[] }[] = [];
  for (const term of text
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean)) {
    const match = /^([^=!]+)(==|=|!=)(.*)$/.exec(term);
    if (!match) throw new Error(`invalid selector: '${term}'; can't understand '${term}'`);
    const key = (match[1] ?? "").trim();
    if (!fields.includes(key)) throw new Error(`field label not supported: ${key}`);
    requirements.push({
      key,
      operator: match[2] === "!=" ? "NotIn" : "In",
      values: [(match[3] ?? "").trim()],
    });
  }
  return requirements;
}

/** True when the values (labels, or field values by path) meet every requirement. */
export function meets(requirements: Requirements, values: Readonly<Record<string, string>>): boolean {
  return requirements.every((requirement) => matchesRequirement(requirement, values));
}

/**
 * Splits text at a separator that stands outside brackets: commas inside `in (a,b)` do not separate
 * requirements, nor dots inside `[name=a.b]` the parts of a field path.
 */
export function splitOutside(text: string, separator: string, open = "(", close = ")"): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = "";
  for (const char of text) {
    if (char === open) depth++;
    if (char === close) depth--;
    if (char === separator && depth === 0) {
      parts.push(current);
      current = "";
    } else current += char;
  }
  parts.push(current);
  return parts;
}
