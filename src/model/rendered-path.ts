/** Where a rendered object lives on the status branch (DESIGN.md §3). */
export interface RenderedIdentity {
  readonly cluster: string;
  readonly group: string;
  readonly kind: string;
  readonly namespace: string | undefined;
  readonly name: string;
}

/**
 * `rendered/<cluster>/<namespace|_cluster>/<group>.<kind>.<name>.yaml`, with "core" for the core group.
 * Injective for validated objects, so no two objects ever share a file: a namespace is a DNS label
 * (never `_cluster`); a group is a lowercase DNS subdomain and never "core" (read-manifest refuses
 * `core/v1`); a kind starts with a capital letter and holds no dot — so the first segment that starts
 * with a capital letter is the kind, and everything after it (dots included) is the name, which
 * cannot contain "/".
 */
export function renderedPath(identity: RenderedIdentity): string {
  const scope = identity.namespace ?? "_cluster";
  return `rendered/${identity.cluster}/${scope}/${identity.group || "core"}.${identity.kind}.${identity.name}.yaml`;
}
