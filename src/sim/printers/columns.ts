/** What every printer is made of: columns, and the cells objects share (name, age, containers). */
import { asList, asMap, type Json, type JsonMap } from "../../apimachinery/json.js";

/** One column of a Table, as metav1.TableColumnDefinition; priority 1 columns are kubectl's `-o wide`. */
export interface Column {
  readonly name: string;
  readonly type: "string" | "integer" | "number" | "boolean" | "date";
  readonly format?: string;
  readonly priority?: number;
  readonly description: string;
}

/** How one kind prints: its columns and each object's cells (all of them: the server always prints wide). */
export interface Printer {
  readonly columns: readonly Column[];
  cells(object: JsonMap, now: Date): Json[];
  conditions?(object: JsonMap): Json[] | undefined;
}

export const NAME: Column = {
  name: "Name",
  type: "string",
  format: "name",
  description: "Name must be unique within a namespace.",
};
export const AGE: Column = {
  name: "Age",
  type: "string",
  description: "CreationTimestamp is when this object was created.",
};
export const CONTAINERS: Column = {
  name: "Containers",
  type: "string",
  priority: 1,
  description: "Names of each container in the template.",
};
export const IMAGES: Column = {
  name: "Images",
  type: "string",
  priority: 1,
  description: "Images referenced by each container in the template.",
};
export const SELECTOR: Column = {
  name: "Selector",
  type: "string",
  priority: 1,
  description: "The label selector of the pods.",
};

export const column = (name: string, type: Column["type"], description: string, priority?: number): Column =>
  priority ? { name, type, priority, description } : { name, type, description };

export function nameOf(o: JsonMap): string {
  return String(asMap(o.metadata).name ?? "");
}

export function created(o: JsonMap): Json | undefined {
  return asMap(o.metadata).creationTimestamp;
}

export function int(value: Json | undefined): number {
  return typeof value === "number" ? Math.trunc(value) : 0;
}

// CONTAINERS and IMAGES of a pod template: the names and images, comma-separated.
export function template(spec: JsonMap): [string, string] {
  const containers = asList(asMap(asMap(spec.template).spec).containers).map(asMap);
  return [
    containers.map((c) => String(c.name ?? "")).join(","),
    containers.map((c) => String(c.image ?? "")).join(","),
  ];
}
