import v134 from "../../../schema/kubernetes/v1.34.json" with { type: "json" };
import v135 from "../../../schema/kubernetes/v1.35.json" with { type: "json" };
import v136 from "../../../schema/kubernetes/v1.36.json" with { type: "json" };
import type { Definitions, OpenApiSchema } from "./validate-object.js";

// The OpenAPI schemas of the built-in kinds, for each Kubernetes minor gitfleet supports, generated
// by scripts/kubernetes-schemas.mjs from a pinned release (never fetched at run time).

/** The schemas of one release: each kind's definition, and every definition by name. */
interface ShippedSchemas {
  readonly release: string;
  readonly kinds: Readonly<Record<string, string>>;
  readonly definitions: Readonly<Record<string, OpenApiSchema>>;
}

const RELEASES: Readonly<Record<string, ShippedSchemas>> = {
  "1.34": v134 as unknown as ShippedSchemas,
  "1.35": v135 as unknown as ShippedSchemas,
  "1.36": v136 as unknown as ShippedSchemas,
};

/** The minors gitfleet validates against, oldest first. */
export const KUBERNETES_MINORS: readonly string[] = Object.keys(RELEASES).sort(
  (a, b) => Number(a.split(".")[1]) - Number(b.split(".")[1]),
);

/** The minor a fleet validates against when it names none: the newest. */
export const DEFAULT_KUBERNETES_MINOR = KUBERNETES_MINORS[KUBERNETES_MINORS.length - 1] as string;

/** The release (x.y.z) whose schemas a minor uses. */
export function releaseOf(minor: string): string | undefined {
  return RELEASES[minor]?.release;
}

/** A built-in kind's schema in a minor, and the definitions it refers to; undefined for other kinds. */
export function builtInSchema(
  minor: string,
  apiVersion: string,
  kind: string,
): { schema: OpenApiSchema; definitions: Definitions } | undefined {
  const release = RELEASES[minor];
  const name = release?.kinds[`${apiVersion}/${kind}`];
  if (!release || !name) return undefined;
  const definitions: Definitions = (ref) =>
    Object.hasOwn(release.definitions, ref) ? release.definitions[ref] : undefined;
  return { schema: { ref: name }, definitions };
}

/**
 * A kind's definition and every definition it refers to, transitively, by name (for an OpenAPI
 * document's components); the kind's own definition name is `name`. Undefined for other kinds.
 */
export function kindDefinitions(
  minor: string,
  apiVersion: string,
  kind: string,
): { name: string; definitions: Map<string, OpenApiSchema> } | undefined {
  const release = RELEASES[minor];
  const name = release?.kinds[`${apiVersion}/${kind}`];
  if (!release || !name) return undefined;
  const definitions = new Map<string, OpenApiSchema>();
  const visit = (ref: string) => {
    if (definitions.has(ref) || !Object.hasOwn(release.definitions, ref)) return;
    const definition = release.definitions[ref] as OpenApiSchema;
    definitions.set(ref, definition);
    for (const found of refsOf(definition)) visit(found);
  };
  visit(name);
  return { name, definitions };
}

function refsOf(schema: unknown): string[] {
  if (Array.isArray(schema)) return schema.flatMap(refsOf);
  if (schema === null || typeof schema !== "object") return [];
  return Object.entries(schema).flatMap(([key, value]) =>
    key === "ref" && typeof value === "string" ? [value] : refsOf(value),
  );
}

/** Groups Kubernetes served once and no longer serves (their kinds moved to other groups). */
const REMOVED_GROUPS = new Set(["extensions"]);

/** Whether a group (by apiVersion) is one of Kubernetes' own in a minor, or one it removed. */
export function isBuiltInGroup(minor: string, apiVersion: string): boolean {
  const group = apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.indexOf("/")) : "";
  return REMOVED_GROUPS.has(group) || (groupsOf(minor)?.has(group) ?? false);
}

// The groups a release serves ("" for core), computed once per release.
const groups = new Map<string, ReadonlySet<string>>();
function groupsOf(minor: string): ReadonlySet<string> | undefined {
  const release = RELEASES[minor];
  if (!release) return undefined;
  let found = groups.get(minor);
  if (!found) {
    // Keys are "group/version/Kind", or "version/Kind" for the core group.
    found = new Set(
      Object.keys(release.kinds).map((key) =>
        key.split("/").length === 3 ? (key.split("/")[0] as string) : "",
      ),
    );
    groups.set(minor, found);
  }
  return found;
}
