import { asMap, type JsonMap } from "../../apimachinery/json.js";
import type { SourceDocument } from "../../model/yaml-source.js";

/** A name and namespace an object had (kustomize's resource id, less the kind, which never changes). */
export interface PreviousId {
  readonly name: string;
  readonly namespace: string;
}

/** One object a kustomization built, and the file of the fleet repo it came from. */
export interface BuiltObject {
  readonly object: JsonMap;
  readonly file: string;
  /** The document it was read from (a generated object: its kustomization), to locate problems. */
  readonly source: SourceDocument;
  /** Every name and namespace it had before its current ones, oldest first. */
  readonly previousIds: readonly PreviousId[];
  /** A generated ConfigMap or Secret whose name takes its content hash at the end of the build. */
  readonly hashSuffix?: boolean;
  /** The namePrefix and nameSuffix values applied to it, innermost first (kustomize compares them). */
  readonly prefixes: readonly string[];
  readonly suffixes: readonly string[];
}

/** An object read from a file or generated, before any transformer. */
export function freshObject(object: JsonMap, source: SourceDocument, hashSuffix = false): BuiltObject {
  return {
    object,
    file: source.file,
    source,
    previousIds: [],
    prefixes: [],
    suffixes: [],
    ...(hashSuffix ? { hashSuffix } : {}),
  };
}

export function nameOf(object: JsonMap): string {
  return String(asMap(object.metadata).name ?? "");
}

export function namespaceOf(object: JsonMap): string {
  return String(asMap(object.metadata).namespace ?? "");
}

/** The object's group: "" for the core API. */
export function groupOf(object: JsonMap): string {
  const apiVersion = String(object.apiVersion ?? "");
  return apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.indexOf("/")) : "";
}

export function versionOf(object: JsonMap): string {
  const apiVersion = String(object.apiVersion ?? "");
  return apiVersion.slice(apiVersion.indexOf("/") + 1);
}

/** The name it had in its file, before prefixes, suffixes and hashes: replicas match it. */
export function originalNameOf(built: BuiltObject): string {
  return built.previousIds[0]?.name ?? nameOf(built.object);
}

/** The same object after a transformer changed its name or namespace: the old id joins its history. */
export function withId(built: BuiltObject, before: PreviousId): BuiltObject {
  const now = { name: nameOf(built.object), namespace: namespaceOf(built.object) };
  if (now.name === before.name && now.namespace === before.namespace) return built;
  return { ...built, previousIds: [...built.previousIds, before] };
}
