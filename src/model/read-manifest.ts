import {
  type GroupKind,
  groupKind,
  groupOf,
  LABEL_NAMED_KINDS,
  PATH_SEGMENT_NAMED_KINDS,
} from "../apimachinery/kinds.js";
import {
  explainInvalidApiVersion,
  explainInvalidDns1123Label,
  explainInvalidDns1123Subdomain,
  explainInvalidKind,
  explainInvalidLabelKey,
  explainInvalidLabelValue,
  explainInvalidPathSegmentName,
} from "../apimachinery/names.js";
import { isRecord, kindOfValue } from "./read-gitfleet-object.js";
import type { Reporter } from "./reporter.js";
import { describe } from "./schema-problems.js";
import type { Labels, Origin, Resource } from "./types.js";
import type { SourceDocument } from "./yaml-source.js";

/** What a manifest needs to know about its surroundings. */
export interface ManifestContext {
  readonly app: string;
  /** The app's default namespace (app.yaml spec.namespace, else "default"). */
  readonly defaultNamespace: string;
  readonly isClusterScoped: (key: GroupKind) => boolean;
}

/**
 * Checks one Kubernetes manifest from apps/<app>/: apiVersion, kind and metadata.name present and
 * well-formed, namespace resolved, labels and annotations valid. Returns the resource, or undefined
 * when its identity cannot be known.
 */
export function readManifest(
  source: SourceDocument,
  context: ManifestContext,
  reporter: Reporter,
): Resource | undefined {
  const origin = {
    file: source.file,
    index: source.index,
    ...(source.item === undefined ? {} : { item: source.item }),
  };
  const object = source.value;
  if (!isRecord(object)) {
    reporter.report({
      origin,
      path: [],
      code: "NOT_AN_OBJECT",
      message: `expected a Kubernetes object (a mapping), got ${kindOfValue(object)}`,
    });
    return undefined;
  }
  const apiVersion = requireString(object, ["apiVersion"], origin, reporter);
  const kind = requireString(object, ["kind"], origin, reporter);
  const metadata = object.metadata;
  if (!isRecord(metadata)) {
    const missing = metadata === undefined;
    reporter.report({
      origin,
      path: ["metadata"],
      code: missing ? "MISSING_FIELD" : "SCHEMA_VIOLATION",
      message: missing
        ? 'missing required field "metadata"'
        : `must be a mapping (got ${describe(metadata)})`,
      target: missing ? "key" : "value",
    });
    return undefined;
  }
  const name = requireString(metadata, ["metadata", "name"], origin, reporter);
  if (apiVersion === undefined || kind === undefined || name === undefined) return undefined;
  // The identity becomes a file path on the status branch: refuse what the API server would.
  checkType(apiVersion, kind, origin, reporter);
  const key = groupKind(groupOf(apiVersion), kind);
  checkName(key, name, origin, reporter);
  const namespace = resolveNamespace(metadata.namespace, key, context, origin, reporter);
  const labels = readStringMap(metadata, "labels", origin, reporter);
  readStringMap(metadata, "annotations", origin, reporter);
  return {
    app: context.app,
    apiVersion,
    group: groupOf(apiVersion),
    kind,
    name,
    namespace,
    labels,
    object,
    origin,
  };
}

function requireString(
  parent: Record<string, unknown>,
  path: readonly string[],
  origin: Origin,
  reporter: Reporter,
): string | undefined {
  const field = path.at(-1) ?? "";
  const value = parent[field];
  if (typeof value === "string" && value.length > 0) return value;
  if (value === undefined) {
    reporter.report({
      origin,
      path,
      code: "MISSING_FIELD",
      message: `missing required field "${field}"`,
      target: "key",
    });
  } else {
    reporter.report({
      origin,
      path,
      code: "SCHEMA_VIOLATION",
      message: `must be a non-empty string (got ${describe(value)})`,
    });
  }
  return undefined;
}

// Reports an apiVersion or kind the API server would refuse.
function checkType(apiVersion: string, kind: string, origin: Origin, reporter: Reporter): void {
  const versionReason = explainInvalidApiVersion(apiVersion);
  if (versionReason)
    reporter.report({ origin, path: ["apiVersion"], code: "INVALID_NAME", message: versionReason });
  const kindReason = explainInvalidKind(kind);
  if (kindReason) reporter.report({ origin, path: ["kind"], code: "INVALID_NAME", message: kindReason });
}

// Reports a name the kind's naming rule refuses.
function checkName(key: GroupKind, name: string, origin: Origin, reporter: Reporter): void {
  let reason: string | undefined;
  if (PATH_SEGMENT_NAMED_KINDS.has(key)) {
    reason = explainInvalidPathSegmentName(name);
  } else if (LABEL_NAMED_KINDS.has(key)) {
    reason = explainInvalidDns1123Label(name);
  } else {
    reason = explainInvalidDns1123Subdomain(name);
  }
  if (reason) reporter.report({ origin, path: ["metadata", "name"], code: "INVALID_NAME", message: reason });
}

function resolveNamespace(
  written: unknown,
  key: GroupKind,
  context: ManifestContext,
  origin: Origin,
  reporter: Reporter,
): string | undefined {
  const path = ["metadata", "namespace"];
  const clusterScoped = context.isClusterScoped(key);
  if (written === undefined) return clusterScoped ? undefined : context.defaultNamespace;
  if (typeof written !== "string") {
    reporter.report({
      origin,
      path,
      code: "SCHEMA_VIOLATION",
      message: `must be a string (got ${describe(written)})`,
    });
    return clusterScoped ? undefined : context.defaultNamespace;
  }
  if (clusterScoped) {
    const message = `${key.slice(key.indexOf("/") + 1)} is cluster-scoped; metadata.namespace is ignored, remove it`;
    reporter.report({ origin, path, code: "SCOPE_MISMATCH", message, severity: "warning" });
    return undefined;
  }
  const reason = explainInvalidDns1123Label(written);
  if (reason) reporter.report({ origin, path, code: "INVALID_NAME", message: `namespace ${reason}` });
  return written;
}

function readStringMap(
  metadata: Record<string, unknown>,
  field: "labels" | "annotations",
  origin: Origin,
  reporter: Reporter,
): Labels {
  const map = metadata[field];
  if (map === undefined || map === null) return {};
  if (!isRecord(map)) {
    const message = `must be a mapping of strings (got ${describe(map)})`;
    reporter.report({ origin, path: ["metadata", field], code: "SCHEMA_VIOLATION", message });
    return {};
  }
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(map)) {
    const finding = checkMetadataEntry(field, key, value);
    if (finding)
      reporter.report({ origin, path: ["metadata", field, key], code: "INVALID_LABEL", ...finding });
    if (typeof value === "string")
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

// What is wrong with one label or annotation, pointing at the key or the value.
function checkMetadataEntry(
  field: "labels" | "annotations",
  key: string,
  value: unknown,
): { message: string; target: "key" | "value" } | undefined {
  const noun = field === "labels" ? "label" : "annotation";
  if (typeof value !== "string") {
    return {
      message: `${noun} values must be strings (got ${describe(value)}); quote the value`,
      target: "value",
    };
  }
  const keyReason = explainInvalidLabelKey(key);
  if (keyReason) return { message: keyReason, target: "key" };
  const valueReason = field === "labels" ? explainInvalidLabelValue(value) : undefined;
  return valueReason ? { message: valueReason, target: "value" } : undefined;
}
