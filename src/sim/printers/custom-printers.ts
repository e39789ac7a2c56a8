import { asList, asMap, type Json, type JsonMap } from "../../apimachinery/json.js";
import type { Column, Printer } from "./built-in-printers.js";
import { ageOf } from "./human-duration.js";
import { evaluateJsonPath } from "./json-path.js";

const AGE_COLUMN: JsonMap = { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" };

/**
 * How a custom resource prints: NAME, then its CRD version's additionalPrinterColumns (or AGE when
 * it has none), each cell its JSONPath's first match as kube-apiserver gives it — a string column
 * printed, an integer, number or boolean column typed (null when the value has another type), a date
 * column as an age.
 */
export function customResourcePrinter(crd: JsonMap, version: string): Printer {
  const served = asList(asMap(crd.spec).versions)
    .map(asMap)
    .find((v) => v.name === version);
  const given = asList(served?.additionalPrinterColumns).map(asMap);
  const definitions = given.length > 0 ? given : [AGE_COLUMN];
  const columns: Column[] = [
    { name: "Name", type: "string", format: "name", description: "Name must be unique within a namespace." },
    ...definitions.map((d) => ({
      name: String(d.name ?? ""),
      type: String(d.type ?? "string") as Column["type"],
      ...(d.format ? { format: String(d.format) } : {}),
      ...(typeof d.priority === "number" && d.priority > 0 ? { priority: d.priority } : {}),
      description: String(
        d.description ??
          `Custom resource definition column (in JSONPath format): ${String(d.jsonPath ?? "")}`,
      ),
    })),
  ];
  return {
    columns,
    cells: (object, now) => [
      String(asMap(object.metadata).name ?? ""),
      ...definitions.map((d) =>
        cellOf(String(d.type ?? "string"), evaluateJsonPath(String(d.jsonPath ?? ""), object)[0], now),
      ),
    ],
  };
}

// A cell of each column type from a JSON value; null where the value has another type.
const CELLS: Readonly<Record<string, (value: Json, now: Date) => Json>> = {
  string: (value) => (typeof value === "string" ? value : JSON.stringify(value)),
  integer: (value) => (typeof value === "number" ? Math.trunc(value) : null),
  number: (value) => (typeof value === "number" ? value : null),
  boolean: (value) => (typeof value === "boolean" ? value : null),
  date: (value, now) => {
    if (typeof value !== "string") return null;
    return Number.isNaN(Date.parse(value)) ? "<invalid>" : ageOf(value, now);
  },
};

function cellOf(type: string, value: Json | undefined, now: Date): Json {
  if (value === undefined || value === null) return null;
  return CELLS[type]?.(value, now) ?? null;
}
