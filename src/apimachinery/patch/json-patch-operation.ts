// A type of its own, so that code which only names operations (the fleet model's types, read by
// the dashboard's build too) does not pull in the patch engine.

/** One RFC 6902 operation. */
export interface JsonPatchOperation {
  readonly op: "add" | "remove" | "replace" | "move" | "copy" | "test";
  readonly path: string;
  readonly from?: string;
  readonly value?: unknown;
}
