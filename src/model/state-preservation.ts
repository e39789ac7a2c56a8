import { asMap, isJsonMap } from "../apimachinery/json.js";
import { parseJsonPath, readJsonPath } from "../apimachinery/json-path.js";
import { explainInvalidLabelKey, explainInvalidLabelValue } from "../apimachinery/names.js";
import type { PlacementSpec, StatePreservation } from "./types.js";

// Karmada's statePreservation, read: a Placement's rules (cluster and application failover), each a
// label and a JSONPath over the workload's status; what they read from a live workload's status;
// the labels a failover carries from the cluster its replicas left. Pure.

/** One rule: the label and where its value is read. */
export interface StateRule {
  readonly label: string;
  readonly path: readonly (string | number)[];
}

/** Per label, the value read from one cluster's copy of a workload. */
export type PreservedLabels = Readonly<Record<string, string>>;

/** At most this many labels are kept per workload and cluster. */
export const MAX_STATE_LABELS = 16;

/** The rules of a Placement's failover (cluster's first, then application's; one rule per label). */
export function stateRules(placement: PlacementSpec): readonly StateRule[] {
  const all = [
    ...rulesOf(placement.failover?.cluster?.statePreservation),
    ...rulesOf(placement.failover?.application?.statePreservation),
  ];
  const seen = new Set<string>();
  return all.filter((rule) => !seen.has(rule.label) && seen.add(rule.label)).slice(0, MAX_STATE_LABELS);
}

function rulesOf(preservation: StatePreservation | undefined): StateRule[] {
  return (preservation?.rules ?? []).flatMap((rule) => {
    const parsed = parseJsonPath(rule.jsonPath);
    return "segments" in parsed ? [{ label: rule.aliasLabelName, path: parsed.segments }] : [];
  });
}

/**
 * The labels the rules read from a live object's status; a value that is no valid label value (too
 * long, spaces) is left out, as is a path that reaches nothing. Undefined when nothing is read.
 */
export function readState(rules: readonly StateRule[], live: unknown): PreservedLabels | undefined {
  if (rules.length === 0 || !isJsonMap(live)) return undefined;
  const status = asMap(live.status);
  const read: Record<string, string> = {};
  for (const rule of rules) {
    const value = readJsonPath(status, rule.path);
    if (value !== undefined && explainInvalidLabelValue(value) === undefined) read[rule.label] = value;
  }
  return Object.keys(read).length > 0 ? read : undefined;
}

/** Recorded labels read back from the status branch (untrusted): valid keys and values, bounded. */
export function readPreservedLabels(value: unknown): PreservedLabels | undefined {
  if (!isJsonMap(value)) return undefined;
  const labels = Object.entries(value)
    .filter(
      (pair): pair is [string, string] =>
        typeof pair[1] === "string" &&
        explainInvalidLabelKey(pair[0]) === undefined &&
        explainInvalidLabelValue(pair[1]) === undefined,
    )
    .slice(0, MAX_STATE_LABELS);
  return labels.length > 0 ? Object.fromEntries(labels) : undefined;
}
