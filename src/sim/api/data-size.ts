import { asMap, type JsonMap } from "../../apimachinery/json.js";
import type { ApiResource } from "../api-resources.js";
import { invalid } from "../status-error.js";

/** The most a ConfigMap's or a Secret's data may hold, as kube-apiserver's validation says (1 MiB). */
export const MAX_DATA_BYTES = 1024 * 1024;

/**
 * Refuses a ConfigMap or Secret over 1 MiB with kube-apiserver's 422: a ConfigMap counts the values
 * of data and binaryData (binaryData's decoded), a Secret the values of data decoded and of
 * stringData (which a real server has merged into data by then).
 */
export function checkDataSize(resource: ApiResource, object: JsonMap): void {
  if (resource.group !== "") return;
  const name = String(asMap(object.metadata).name ?? "");
  if (resource.kind === "ConfigMap") {
    const total =
      sum(asMap(object.data), (_key, value) => bytes(value)) +
      sum(asMap(object.binaryData), (_key, value) => decoded(value));
    if (total > MAX_DATA_BYTES)
      throw invalid("ConfigMap", name, `[]: Too long: may not be more than ${MAX_DATA_BYTES} bytes`);
  }
  if (resource.kind === "Secret") {
    const total =
      sum(asMap(object.data), (_key, value) => decoded(value)) +
      sum(asMap(object.stringData), (_key, value) => bytes(value));
    if (total > MAX_DATA_BYTES)
      throw invalid("Secret", name, `data: Too long: may not be more than ${MAX_DATA_BYTES} bytes`);
  }
}

function sum(map: JsonMap, size: (key: string, value: unknown) => number): number {
  let total = 0;
  for (const [key, value] of Object.entries(map)) total += size(key, value);
  return total;
}

const bytes = (value: unknown) => (typeof value === "string" ? Buffer.byteLength(value, "utf8") : 0);
const decoded = (value: unknown) => (typeof value === "string" ? Buffer.from(value, "base64").length : 0);
