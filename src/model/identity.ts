/** The identity of an object across renders and clusters: group/kind/namespace/name. */
export function identityOf(group: string, kind: string, namespace: string | undefined, name: string): string {
  return `${group}/${kind}/${namespace ?? ""}/${name}`;
}

/** How messages and status files name an object: "Deployment shop/web", "Namespace shop". */
export function describeObject(kind: string, namespace: string | undefined, name: string): string {
  return `${kind} ${namespace ? `${namespace}/` : ""}${name}`;
}

/** "apps/Deployment/shop/web" → "Deployment shop/web", as status/apps/ names resources. */
export function describeIdentity(identity: string): string {
  const [, kind = "", namespace = "", name = ""] = identity.split("/");
  return describeObject(kind, namespace, name);
}

/** How an object names itself: its kind, and its metadata's namespace and name. */
export function describeManifest(object: { readonly kind?: unknown; readonly metadata?: unknown }): string {
  const metadata = (object.metadata ?? {}) as { readonly name?: unknown; readonly namespace?: unknown };
  const namespace = typeof metadata.namespace === "string" ? metadata.namespace : undefined;
  return describeObject(String(object.kind), namespace, String(metadata.name));
}
