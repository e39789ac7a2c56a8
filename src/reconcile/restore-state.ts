import { parse } from "yaml";
import { asList, asMap, isJsonMap, type JsonMap } from "../apimachinery/json.js";
import { groupOf } from "../apimachinery/kinds.js";
import type { FailoverRecord, PreservedState } from "../failover/workload-failover.js";
import type { FileTree } from "../model/file-tree.js";
import { compareStrings } from "../model/file-tree.js";
import { identityOf } from "../model/identity.js";
import { type PreservedLabels, readPreservedLabels } from "../model/state-preservation.js";
import type { FleetModel } from "../model/types.js";
import { compareErrors } from "../render/render-fleet.js";
import type { RenderError, RenderedObject, RenderResult, WorkloadDecision } from "../render/render-result.js";

import { APP_LABEL } from "../render/tracking.js";
import { readEmittedYaml } from "../render/yaml-reader.js";
import type { ScheduleDecision } from "../schedule/types.js";
import { appStatusFiles, readSourceStatus, SOURCE_STATUS_PATH } from "../status/status-files.js";
import type { ReconcileState } from "./reconcile-step.js";

/** Where the loop stood when the status branch was last written, read from its status/source.yaml. */
export interface SourcePosition {
  readonly sourceCommit: string | undefined;
  readonly renderedCommit: string | undefined;
}

/** Reads status/source.yaml; a branch without one (or none at all) has reconciled nothing. */
export function sourcePosition(files: ReadonlyMap<string, string>): SourcePosition {
  const text = files.get(SOURCE_STATUS_PATH);
  if (text === undefined) return { sourceCommit: undefined, renderedCommit: undefined };
  const { sourceCommit, renderedCommit } = readSourceStatus(readYaml(text, SOURCE_STATUS_PATH));
  return { sourceCommit, renderedCommit };
}

/**
 * Rebuilds the loop's state from the status branch's files, the fleet repo at the rendered commit and
 * its model — what a restarted controller does, so that it continues exactly where the last status
 * commit left off: rendered objects from rendered/, decisions, errors and per-app source commits
 * from status/apps/. Pure.
 */
export function restoreState(
  files: ReadonlyMap<string, string>,
  tree: FileTree,
  model: FleetModel | undefined,
): ReconcileState {
  const position = sourcePosition(files);
  const objects: RenderedObject[] = [];
  const decisions: WorkloadDecision[] = [];
  const errors: RenderError[] = [];
  const appCommits = new Map<string, string>();
  for (const [path, text] of files)
    if (path.startsWith("rendered/")) objects.push(renderedObject(path, text));
  const apps = [...appStatusFiles(files.keys())].map(
    ([app, path]) => [app, asMap(readYaml(files.get(path) ?? "", path))] as const,
  );
  // Decisions in the order a render gives them: by app, then as the app's file lists them.
  for (const [app, status] of apps.sort(([a], [b]) => compareStrings(a, b))) {
    if (typeof status.sourceCommit === "string") appCommits.set(app, status.sourceCommit);
    for (const workload of asList(status.workloads)) decisions.push(workloadDecision(app, asMap(workload)));
    for (const error of asList(status.errors)) errors.push(renderError(app, asMap(error)));
  }
  objects.sort((a, b) => compareStrings(a.path, b.path));
  const render: RenderResult = { objects, decisions, errors: errors.sort(compareErrors) };
  return { ...position, tree, model, render, appCommits, files };
}

// The identity and app come from the file's first lines (gitfleet's serializer puts apiVersion, kind
// and metadata first); the whole object is parsed only when something asks for it.
function renderedObject(path: string, text: string): RenderedObject {
  let parsed: JsonMap | undefined;
  const parse = () => {
    parsed ??= asMap(readYaml(text, path));
    return parsed;
  };
  const header = readHeader(text) ?? headerOf(parse());
  return {
    cluster: path.split("/")[1] ?? "",
    app: header.app,
    path,
    identity: identityOf(groupOf(header.apiVersion), header.kind, header.namespace, header.name),
    get object() {
      return parse();
    },
    text,
  };
}

interface Header {
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string | undefined;
  app: string;
}

/** apiVersion, kind, name, namespace and app label from the head of a rendered file; undefined if it is not laid out as gitfleet writes it. */
export function readHeader(text: string): Header | undefined {
  const found: Found = {};
  let section = "";
  for (const line of text.split("\n", 200)) {
    if (line === "") continue;
    const entry = mappingLine(line);
    if (!entry) return undefined;
    // The first top-level key after metadata ends the header.
    if (entry.indent === 0 && (section === "metadata" || section === "labels")) break;
    section = takeHeaderField(found, section, entry);
  }
  const { apiVersion, kind, name, namespace, app } = found;
  if (!apiVersion || !kind || !name || app === undefined) return undefined;
  return { apiVersion, kind, name, namespace, app };
}

type Found = { [K in keyof Header]?: string | undefined };

function mappingLine(line: string): { indent: number; key: string; value: string | undefined } | undefined {
  const match = /^( *)("(?:[^"\\]|\\.)*"|[^ "][^:]*?):(?: (.*))?$/.exec(line);
  if (!match) return undefined;
  const [, indent = "", key = "", value] = match;
  return {
    indent: indent.length,
    key: unquote(key),
    value: value === undefined ? undefined : unquote(value),
  };
}

// Records what a line of the header gives and returns the section the next line is in.
function takeHeaderField(
  found: Found,
  section: string,
  line: { indent: number; key: string; value: string | undefined },
): string {
  const { indent, key, value } = line;
  if (indent === 0) {
    if (key === "apiVersion" || key === "kind") found[key] = value;
    return key;
  }
  const inMetadata = section === "metadata" || section === "labels";
  if (indent === 2 && inMetadata) {
    if (key === "name" || key === "namespace") found[key] = value;
    return key === "labels" ? "labels" : "metadata";
  }
  if (indent === 4 && section === "labels" && key === APP_LABEL) found.app = value;
  return section;
}

function unquote(text: string): string {
  return text.startsWith('"') ? (JSON.parse(text) as string) : text;
}

function headerOf(object: JsonMap): Header {
  const metadata = asMap(object.metadata);
  const app = asMap(metadata.labels)[APP_LABEL];
  return {
    apiVersion: String(object.apiVersion),
    kind: String(object.kind),
    name: String(metadata.name),
    namespace: typeof metadata.namespace === "string" ? metadata.namespace : undefined,
    app: typeof app === "string" ? app : "",
  };
}

// The ScaleDownRequest holding a division; status files written before the rename call it heldBy.
function scaleDownBy(workload: JsonMap): { scaleDownBy?: string } {
  const name = workload.scaleDownBy ?? workload.heldBy;
  return typeof name === "string" ? { scaleDownBy: name } : {};
}

function workloadDecision(app: string, workload: JsonMap): WorkloadDecision {
  return {
    identity: String(workload.identity),
    app,
    resource: String(workload.resource),
    placement: String(workload.placement),
    replicas: Number(workload.replicas),
    ...(typeof workload.autoscaledBy === "string" ? { autoscaledBy: workload.autoscaledBy } : {}),
    ...scaleDownBy(workload),
    ...(Array.isArray(workload.capacityUnknown)
      ? { capacityUnknown: workload.capacityUnknown.filter((c): c is string => typeof c === "string") }
      : {}),
    ...(typeof workload.suspended === "string" ? { suspended: workload.suspended } : {}),
    ...(isJsonMap(workload.memberHpas)
      ? { memberHpas: workload.memberHpas as unknown as NonNullable<WorkloadDecision["memberHpas"]> }
      : {}),
    decision: workload.decision as unknown as ScheduleDecision,
    ...(isJsonMap(workload.failover) ? { failover: failoverRecord(workload.failover) } : {}),
    ...ordinalsOf(workload.ordinals),
    ...stateOf(workload.state),
  };
}

// A workload's remembered statePreservation labels per cluster (the branch is untrusted: bounded, valid labels only).
function stateOf(value: unknown): { state?: Record<string, PreservedLabels> } {
  if (!isJsonMap(value)) return {};
  const state = Object.entries(value).flatMap(([cluster, labels]) => {
    const read = readPreservedLabels(labels);
    return read ? [[cluster, read] as const] : [];
  });
  return state.length > 0 ? { state: Object.fromEntries(state.slice(0, 1000)) } : {};
}

// The labels failover moves carried, as recorded.
function preservedStates(value: unknown): { preserved?: PreservedState[] } {
  const states = asList(value).flatMap((entry) => {
    const state = asMap(entry);
    const labels = readPreservedLabels(state.labels);
    const to = asList(state.to).filter((c): c is string => typeof c === "string");
    if (!labels || typeof state.from !== "string" || typeof state.at !== "string" || to.length === 0)
      return [];
    return [{ from: state.from, to, labels, at: state.at }];
  });
  return states.length > 0 ? { preserved: states.slice(-10) } : {};
}

// A divided StatefulSet's ordinal starts as status/apps/ writes them: whole numbers per cluster.
function ordinalsOf(value: unknown): { ordinals?: Record<string, number> } {
  if (!isJsonMap(value)) return {};
  const starts = Object.entries(value).filter(
    (pair): pair is [string, number] =>
      typeof pair[1] === "number" && Number.isSafeInteger(pair[1]) && pair[1] >= 0,
  );
  return starts.length > 0 ? { ordinals: Object.fromEntries(starts) } : {};
}

// A failover record as status/apps/ writes it; lists that are missing count as empty.
function failoverRecord(value: JsonMap): FailoverRecord {
  return {
    ...(typeof value.placement === "string" ? { placement: value.placement } : {}),
    movedOff: asList(value.movedOff) as unknown as FailoverRecord["movedOff"],
    keeping: asList(value.keeping) as unknown as FailoverRecord["keeping"],
    capped: asList(value.capped) as unknown as FailoverRecord["capped"],
    ...preservedStates(value.preserved),
  };
}

function renderError(app: string, error: JsonMap): RenderError {
  return {
    cluster: String(error.cluster),
    app,
    resource: String(error.resource),
    file: String(error.file),
    ...(typeof error.rule === "number" ? { rule: error.rule } : {}),
    ...(error.code === "SERVICE_CONFLICT" ? { code: error.code } : {}),
    message: String(error.message),
  };
}

// The status branch is written by gitfleet; a file it cannot read was edited by hand.
function readYaml(text: string, path: string): unknown {
  try {
    return readEmittedYaml(text) ?? parse(text, { version: "1.1" });
  } catch (error) {
    throw new Error(
      `${path} on the status branch is not valid YAML (was it edited by hand?): ${String(error)}`,
    );
  }
}
