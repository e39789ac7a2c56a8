/**
 * A container image reference, `[registry/]repository[:tag][@digest]`, parsed the way Docker and
 * Kubernetes read it: the first path component is a registry only when it contains "." or ":" or is
 * "localhost" (so `nginx` and `library/nginx` have none, `registry.example.com:5000/a/b` has one), the
 * tag follows the last ":" after the registry, and a digest follows "@".
 */
export interface ImageReference {
  readonly registry: string;
  readonly repository: string;
  readonly tag: string;
  readonly digest: string;
}

const REPOSITORY = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$/;
const REGISTRY =
  /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:]+\])(?::[0-9]+)?$/;

/** Parses an image reference, or says why it is not one. */
export function parseImageReference(text: string): ImageReference | { readonly error: string } {
  const at = text.indexOf("@");
  const digest = at >= 0 ? text.slice(at + 1) : "";
  const name = at >= 0 ? text.slice(0, at) : text;
  const slash = name.indexOf("/");
  const first = slash >= 0 ? name.slice(0, slash) : "";
  const hasRegistry = slash >= 0 && (first.includes(".") || first.includes(":") || first === "localhost");
  const registry = hasRegistry ? first : "";
  const rest = hasRegistry ? name.slice(slash + 1) : name;
  const colon = rest.lastIndexOf(":");
  const repository = colon >= 0 ? rest.slice(0, colon) : rest;
  const tag = colon >= 0 ? rest.slice(colon + 1) : "";
  const reference = { registry, repository, tag, digest };
  const problem = explainInvalidReference(reference);
  return problem === undefined ? reference : { error: `"${text}" is not an image reference: ${problem}` };
}

/** Why the parts do not form a valid reference, or undefined. */
export function explainInvalidReference(reference: ImageReference): string | undefined {
  if (reference.registry !== "" && !REGISTRY.test(reference.registry))
    return `registry "${reference.registry}" is not a host[:port]`;
  if (!REPOSITORY.test(reference.repository))
    return `repository "${reference.repository}" must be lowercase path components`;
  if (reference.tag !== "" && !TAG.test(reference.tag)) return `tag "${reference.tag}" is not a valid tag`;
  if (reference.digest !== "" && !DIGEST.test(reference.digest))
    return `digest "${reference.digest}" is not algorithm:hex`;
  return undefined;
}

/** Writes a reference back in its canonical form. */
export function formatImageReference(reference: ImageReference): string {
  const registry = reference.registry === "" ? "" : `${reference.registry}/`;
  const tag = reference.tag === "" ? "" : `:${reference.tag}`;
  const digest = reference.digest === "" ? "" : `@${reference.digest}`;
  return `${registry}${reference.repository}${tag}${digest}`;
}
