import type { GroupKind } from "../apimachinery/kinds.js";

/**
 * Kinds whose deletion loses data or takes other objects along: a Namespace (everything in it), a
 * PersistentVolumeClaim or PersistentVolume (the data), a CustomResourceDefinition (every custom
 * resource of it). Pruning never deletes one without a token, and a hook may not be one unless the
 * operator allows it, since making a hook afresh deletes what was there.
 */
export const PROTECTED_KINDS: ReadonlySet<GroupKind> = new Set([
  "/Namespace",
  "/PersistentVolumeClaim",
  "/PersistentVolume",
  "apiextensions.k8s.io/CustomResourceDefinition",
]);
