/** Kubernetes labels and label selectors: the types and their matching semantics. */

/** An object's labels (or annotations): keys to values. */
export type Labels = Readonly<Record<string, string>>;

export interface LabelSelectorRequirement {
  readonly key: string;
  readonly operator: "In" | "NotIn" | "Exists" | "DoesNotExist";
  readonly values?: readonly string[];
}

export interface LabelSelector {
  readonly matchLabels?: Labels;
  readonly matchExpressions?: readonly LabelSelectorRequirement[];
}

/** True when the labels satisfy every part of the selector; an empty selector matches everything. */
export function matchesLabelSelector(selector: LabelSelector, labels: Labels): boolean {
  const matchLabels = selector.matchLabels;
  // for-in, not Object.entries: the scheduler calls this for every cluster of every workload.
  for (const key in matchLabels) {
    if (!Object.hasOwn(matchLabels, key)) continue;
    if (ownLabel(labels, key) !== matchLabels[key]) return false;
  }
  return (selector.matchExpressions ?? []).every((requirement) => matchesRequirement(requirement, labels));
}

/**
 * Kubernetes selector requirement semantics over labels: In, NotIn, Exists, DoesNotExist, and the
 * node-selector-only Gt and Lt (integer comparison). An unknown operator matches nothing.
 */
export function matchesRequirement(
  requirement: { readonly key: string; readonly operator: string; readonly values?: readonly string[] },
  labels: Labels,
): boolean {
  const value = ownLabel(labels, requirement.key);
  const values = requirement.values ?? [];
  switch (requirement.operator) {
    case "In":
      return value !== undefined && values.includes(value);
    case "NotIn":
      return value === undefined || !values.includes(value);
    case "Exists":
      return value !== undefined;
    case "DoesNotExist":
      return value === undefined;
    case "Gt":
    case "Lt": {
      const left = Number(value);
      const right = Number(values[0]);
      if (value === undefined || !Number.isInteger(left) || !Number.isInteger(right)) return false;
      return requirement.operator === "Gt" ? left > right : left < right;
    }
    default:
      return false;
  }
}

// A label's value: only the object's own labels count (a key "constructor" is not Object's).
function ownLabel(labels: Labels, key: string): string | undefined {
  return Object.hasOwn(labels, key) ? labels[key] : undefined;
}
