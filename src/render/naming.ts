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
 * Kubernetes names cannot contain "/" (RBAC names may contain ":"), so paths never collide.
 */
export function renderedPath(identity: RenderedIdentity): string {
  const scope = identity.namespace ?? "_cluster";
  return `rendered/${identity.cluster}/${scope}/${identity.group || "core"}.${identity.kind}.${identity.name}.yaml`;
}
