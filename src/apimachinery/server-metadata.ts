/**
 * The metadata fields the API server sets on every object it stores: never what a client wrote, and
 * never a difference between what was applied and what runs.
 */
export const SERVER_SET_METADATA: ReadonlySet<string> = new Set([
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "managedFields",
  "selfLink",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
]);
