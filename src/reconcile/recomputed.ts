/**
 * What one reconcile computed again rather than kept: the cost of a change, which an incremental
 * reconcile keeps proportional to what the change touches, not to the fleet.
 */
export interface Recomputed {
  /** Fleet repo files parsed anew (their bytes changed, or no earlier load had them). */
  readonly files: number;
  /** Apps rendered again (every app of the fleet, and every app that left it, for a full render). */
  readonly apps: number;
  /** (app, cluster) pairs rendered again: each cluster an app rendered again has objects on. */
  readonly pairs: number;
}

/** Nothing computed again: an invalid commit that rendered nothing, apart from the files it parsed. */
export function onlyParsed(files: number): Recomputed {
  return { files, apps: 0, pairs: 0 };
}

/**
 * What a render computed again: `examined` the apps it rendered again (for a full render, every app
 * of the fleet and every app that left it), `outputs` what they rendered. It parsed no file: the
 * source step, which loaded the tree, counts those.
 */
export function recomputedBy(
  examined: ReadonlySet<string>,
  outputs: ReadonlyMap<string, { readonly objects: readonly { readonly cluster: string }[] }>,
): Recomputed {
  let pairs = 0;
  for (const { objects } of outputs.values()) pairs += new Set(objects.map((o) => o.cluster)).size;
  return { files: 0, apps: examined.size, pairs };
}
