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

/**
 * The identity a rendered path names — renderedPath read backwards — or undefined for a path
 * renderedPath never writes. A path on a status branch is untrusted: this only takes it apart.
 */
export function parseRenderedPath(path: string): RenderedIdentity | undefined {
  const parts = path.split("/");
  if (parts.length !== 4 || parts[0] !== "rendered") return undefined;
  const [, cluster = "", scope = "", file = ""] = parts;
  if (cluster === "" || scope === "" || !file.endsWith(".yaml")) return undefined;
  const segments = file.slice(0, -".yaml".length).split(".");
  const at = segments.findIndex((segment) => /^[A-Z]/.test(segment));
  if (at < 1 || at === segments.length - 1) return undefined;
  const group = segments.slice(0, at).join(".");
  return {
    cluster,
    group: group === "core" ? "" : group,
    kind: segments[at] as string,
    namespace: scope === "_cluster" ? undefined : scope,
    name: segments.slice(at + 1).join("."),
  };
}
