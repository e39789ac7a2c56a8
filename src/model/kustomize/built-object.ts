import type { JsonMap } from "../json.js";

/** One object a kustomization built, and the file of the fleet repo it came from. */
export interface BuiltObject {
  readonly object: JsonMap;
  readonly file: string;
  /** The name it had in its file, before prefixes and suffixes: replicas and references match it. */
  readonly originalName: string;
}
