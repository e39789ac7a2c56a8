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

const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const KIND = /^[A-Z][A-Za-z0-9]*$/;

/**
 * Why `apiVersion` is not `[group/]version` as the API server reads it, or undefined: the group a
 * DNS-1123 subdomain (never "core": the core group has no name, its apiVersion is "v1"), the version
 * a DNS-1035 label.
 */
export function explainInvalidApiVersion(apiVersion: string): string | undefined {
  const parts = apiVersion.split("/");
  if (parts.length > 2)
    return `apiVersion "${apiVersion}" must be group/version or version (one "/" at most)`;
  const [group, version] = parts.length === 2 ? parts : ["", parts[0] ?? ""];
  if (group === "core") return `apiVersion "${apiVersion}": the core group has no name; write "${version}"`;
  if (parts.length === 2 && explainInvalidDns1123Subdomain(group ?? ""))
    return `apiVersion "${apiVersion}": the group must be a DNS subdomain (lowercase letters, digits, '-' and '.')`;
  if (!version || version.length > 63 || !DNS1035_LABEL.test(version))
    return `apiVersion "${apiVersion}": the version must be a lowercase letter followed by lowercase letters, digits and '-', such as v1 or v1beta1`;
  return undefined;
}

/** Why `kind` is not a Kubernetes kind (CamelCase: a capital letter, then letters and digits), or undefined. */
export function explainInvalidKind(kind: string): string | undefined {
  if (kind.length > 63 || !KIND.test(kind))
    return `kind "${kind}" must start with a capital letter and hold only letters and digits (at most 63), such as ConfigMap`;
  return undefined;
}

/**
 * Why `name` is not a path segment name (the rule for RBAC objects), or undefined: not "." or "..",
 * no '/' or '%', and — stricter than the API server — no control characters, at most 253 characters,
 * because the name becomes a file name on the status branch.
 */
export function explainInvalidPathSegmentName(name: string): string | undefined {
  if (name === "." || name === ".." || /[/%]/.test(name))
    return `"${name}" may not be "." or ".." or contain '/' or '%'`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused.
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name))
    return `${JSON.stringify(name)} may not contain control characters`;
  if (name.length > 253) return `"${name.slice(0, 40)}…" is longer than 253 characters`;
  return undefined;
}
