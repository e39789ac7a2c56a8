import type { Overriders } from "../../model/types.js";
import {
  explainInvalidReference,
  formatImageReference,
  type ImageReference,
  parseImageReference,
} from "./image-reference.js";

/** One image change from an Override rule. */
export type ImageChange = NonNullable<Overriders["imageOverrider"]>[number];

/**
 * Changes one component of an image reference (Karmada's imageOverrider): `add` appends the value to
 * the component, `replace` sets it, `remove` clears it. The Tag component holds a tag or a digest: a
 * value that looks like a digest (`sha256:…`) sets the digest and clears the tag, any other value
 * sets the tag and clears the digest. A change that leaves an invalid reference is an error, not a
 * silent skip.
 */
export function changeImage(
  image: string,
  change: ImageChange,
): { readonly image: string } | { readonly error: string } {
  const parsed = parseImageReference(image);
  if ("error" in parsed) return parsed;
  const value = change.value ?? "";
  const next = changeComponent(parsed, change.component, change.operator, value);
  const problem = explainInvalidReference(next);
  if (problem !== undefined)
    return {
      error: `${change.operator} ${change.component} "${value}" on "${image}" gives an invalid image: ${problem}`,
    };
  return { image: formatImageReference(next) };
}

function changeComponent(
  reference: ImageReference,
  component: ImageChange["component"],
  operator: ImageChange["operator"],
  value: string,
): ImageReference {
  if (component === "Registry") return { ...reference, registry: apply(reference.registry, operator, value) };
  if (component === "Repository")
    return { ...reference, repository: apply(reference.repository, operator, value) };
  const current = reference.digest !== "" ? reference.digest : reference.tag;
  const updated = apply(current, operator, value);
  const isDigest = /^[A-Za-z][A-Za-z0-9+._-]*:[0-9a-fA-F]{32,}$/.test(updated);
  return { ...reference, tag: isDigest ? "" : updated, digest: isDigest ? updated : "" };
}

function apply(current: string, operator: ImageChange["operator"], value: string): string {
  if (operator === "add") return current + value;
  if (operator === "replace") return value;
  return "";
}
