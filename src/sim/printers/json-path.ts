import { asList, isJsonMap, type Json } from "../../apimachinery/json.js";

/**
 * The JSONPath of a CRD's additionalPrinterColumns, as kube-apiserver evaluates them: fields
 * (`.spec.replicas`, `.metadata.labels['app.kubernetes.io/name']`), indexes (`[0]`, `[-1]`), `[*]`,
 * and filters on a field (`.status.conditions[?(@.type=="Ready")].status`). Missing keys give no
 * result, never an error. Returns every match, in order.
 */
export function evaluateJsonPath(path: string, document: Json): Json[] {
  let current: Json[] = [document];
  for (const step of parseSteps(path)) current = current.flatMap((value) => applyStep(step, value));
  return current;
}

type Step =
  | { readonly kind: "field"; readonly name: string }
  | { readonly kind: "index"; readonly index: number }
  | { readonly kind: "all" }
  | {
      readonly kind: "filter";
      readonly field: readonly string[];
      readonly equals: string | number | boolean;
    };

// ".a.b[0]['c.d'][?(@.x=="y")]" → steps; unknown syntax ends the path (no result).
function parseSteps(path: string): Step[] {
  const steps: Step[] = [];
  const pattern =
    /\.([A-Za-z0-9_-]+)|\['([^']*)'\]|\["([^"]*)"\]|\[(-?\d+)\]|\[\*\]|\[\?\(@((?:\.[A-Za-z0-9_-]+)+)\s*==\s*(?:"([^"]*)"|'([^']*)'|(-?\d+(?:\.\d+)?)|(true|false))\)\]/y;
  const text = path
    .trim()
    .replace(/^\{(.*)\}$/, "$1")
    .replace(/^\$/, "");
  pattern.lastIndex = 0;
  while (pattern.lastIndex < text.length) {
    const match = pattern.exec(text);
    if (!match) return [...steps, { kind: "field", name: "\0unparsed" }];
    steps.push(stepOf(match));
  }
  return steps;
}

function stepOf(match: RegExpExecArray): Step {
  const [whole, field, single, double, index, filterPath, text1, text2, number, bool] = match;
  if (field !== undefined || single !== undefined || double !== undefined)
    return { kind: "field", name: field ?? single ?? double ?? "" };
  if (index !== undefined) return { kind: "index", index: Number(index) };
  if (whole === "[*]") return { kind: "all" };
  const equals = text1 ?? text2 ?? (number !== undefined ? Number(number) : bool === "true");
  return { kind: "filter", field: (filterPath ?? "").split(".").filter(Boolean), equals };
}

function applyStep(step: Step, value: Json): Json[] {
  switch (step.kind) {
    case "field":
      return isJsonMap(value) && value[step.name] !== undefined ? [value[step.name] as Json] : [];
    case "index": {
      const list = asList(value);
      const at = step.index < 0 ? list.length + step.index : step.index;
      return at >= 0 && at < list.length ? [list[at] as Json] : [];
    }
    case "all":
      return Array.isArray(value) ? value : isJsonMap(value) ? Object.values(value) : [];
    case "filter":
      return asList(value).filter((item) => fieldAt(item, step.field) === step.equals);
  }
}

function fieldAt(value: Json, path: readonly string[]): Json | undefined {
  let current: Json | undefined = value;
  for (const name of path) current = isJsonMap(current) ? current[name] : undefined;
  return current;
}
