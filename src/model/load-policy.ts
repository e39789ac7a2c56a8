import { type GroupKind, groupKind } from "../apimachinery/kinds.js";

/**
 * What the operator who runs gitfleet bounds and allows in what a fleet repo builds: set by flags
 * (and their environment variables) of every command that loads a fleet, never by the repo itself,
 * so a pull request cannot raise a bound it is held to.
 */
export interface LoadPolicy {
  /** The most objects one app may build or render (its default build and each target's). */
  readonly maxAppObjects: number;
  /** Kinds the operator allows as hooks although they are cluster-scoped or protected ("group/Kind"). */
  readonly hookKinds: ReadonlySet<GroupKind>;
}

/** The objects an app may build by default: far above any real app, far below a build that explodes. */
export const DEFAULT_MAX_APP_OBJECTS = 10_000;

export const DEFAULT_LOAD_POLICY: LoadPolicy = {
  maxAppObjects: DEFAULT_MAX_APP_OBJECTS,
  hookKinds: new Set(),
};

/**
 * A kind as kubectl names one, `Kind` for the core group or `Kind.group` ("Namespace",
 * "ClusterRole.rbac.authorization.k8s.io"), as a GroupKind; undefined for anything else.
 */
export function parseKindName(text: string): GroupKind | undefined {
  const match = /^([A-Z][A-Za-z0-9]{0,62})(?:\.([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?))?$/.exec(text.trim());
  if (!match) return undefined;
  return groupKind(match[2] ?? "", match[1] as string);
}

/** How a GroupKind is written back in kubectl's notation. */
export function kindName(key: GroupKind): string {
  const slash = key.indexOf("/");
  const group = key.slice(0, slash);
  const kind = key.slice(slash + 1);
  return group === "" ? kind : `${kind}.${group}`;
}
