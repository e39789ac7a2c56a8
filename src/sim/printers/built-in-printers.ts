import { asMap } from "../../apimachinery/json.js";
import { API_PRINTERS } from "./api-printers.js";
import { NAME, nameOf, type Printer } from "./columns.js";
import { CORE_PRINTERS } from "./core-printers.js";
import { WORKLOAD_PRINTERS } from "./workload-printers.js";

export type { Column, Printer } from "./columns.js";

// The kinds kube-apiserver prints without a printer of their own: NAME and CREATED AT.
export const DEFAULT_PRINTER: Printer = {
  columns: [
    NAME,
    { name: "Created At", type: "date", description: "CreationTimestamp is when this object was created." },
  ],
  cells: (o) => [nameOf(o), asMap(o.metadata).creationTimestamp ?? null],
};

/**
 * The printers of kube-apiserver for the built-in kinds a simulated member serves, by "group/Kind"
 * (core kinds as "/Kind"): the columns `kubectl get` shows, in order, with the same names, and cells
 * computed as the API server computes them.
 */
export const BUILT_IN_PRINTERS: ReadonlyMap<string, Printer> = new Map([
  ...WORKLOAD_PRINTERS,
  ...CORE_PRINTERS,
  ...API_PRINTERS,
]);
