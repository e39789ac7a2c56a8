import type { Json } from "../apimachinery/json.js";
import { emitYaml } from "../render/yaml-emitter.js";
import { readEmittedYaml } from "../render/yaml-reader.js";

/** A writer's whole status file: its value as the emitter writes it, byte-stable for the same value. */
export function statusYaml(value: object): string {
  return emitYaml(JSON.parse(JSON.stringify(value)) as Json);
}

/** A status file's text read back, or undefined when it does not read (the branch is untrusted input). */
export function readStatusYaml(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return readEmittedYaml(text);
  } catch {
    return undefined;
  }
}
