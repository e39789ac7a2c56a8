/** Kubernetes naming rules (k8s.io/apimachinery/pkg/util/validation), returning why a name is invalid. */

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Why `name` is not a DNS-1123 label, or undefined. Cluster, app and namespace names are labels. */
export function explainInvalidDns1123Label(name: string): string | undefined {
  if (name.length > 63) return `"${name}" is longer than 63 characters`;
  if (!DNS1123_LABEL.test(name)) {
    return `"${name}" must consist of lowercase letters, digits and '-', and start and end with a letter or digit`;
  }
  return undefined;
}

/** Why `name` is not a DNS-1123 subdomain, or undefined. Most object names are subdomains. */
export function explainInvalidDns1123Subdomain(name: string): string | undefined {
  if (name.length > 253) return `"${name}" is longer than 253 characters`;
  if (!DNS1123_SUBDOMAIN.test(name)) {
    return `"${name}" must consist of lowercase letters, digits, '-' and '.', and start and end with a letter or digit`;
  }
  return undefined;
}

/** Why `key` is not a valid label or annotation key ([prefix/]name), or undefined. */
export function explainInvalidLabelKey(key: string): string | undefined {
  const slash = key.lastIndexOf("/");
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined && explainInvalidDns1123Subdomain(prefix)) {
    return `label key "${key}": prefix "${prefix}" must be a DNS subdomain (lowercase letters, digits, '-' and '.')`;
  }
  if (name.length === 0 || name.length > 63 || !QUALIFIED_NAME.test(name)) {
    return `label key "${key}": name part must be 1-63 characters of letters, digits, '-', '_' and '.', starting and ending with a letter or digit`;
  }
  return undefined;
}

/** Why `value` is not a valid label value, or undefined. */
export function explainInvalidLabelValue(value: string): string | undefined {
  if (value.length > 63 || !LABEL_VALUE.test(value)) {
    return `label value "${value}" must be at most 63 characters of letters, digits, '-', '_' and '.', starting and ending with a letter or digit`;
  }
  return undefined;
}

/**
 * Why `name` cannot name a gitfleet object (a cluster, app, Placement, …), or undefined: a DNS-1123
 * label that is not "constructor" or "prototype". gitfleet keys maps by these names, and those two
 * would read JavaScript's object internals instead of a missing entry.
 */
export function explainInvalidFleetName(name: string): string | undefined {
  if (name === "constructor" || name === "prototype")
    return `"${name}" is reserved (it names JavaScript object internals); choose another name`;
  return explainInvalidDns1123Label(name);
}
