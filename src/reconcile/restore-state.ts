import { parse } from "yaml";
import type { FileTree } from "../model/file-tree.js";
import { compareStrings } from "../model/file-tree.js";
import { asList, asMap, type JsonMap } from "../model/json.js";
import type { FleetModel } from "../model/types.js";
import {
  compareErrors,
  type RenderError,
  type RenderedObject,
  type RenderResult,
  type WorkloadDecision,
} from "../render/render-fleet.js";
import { APP_LABEL } from "../render/tracking.js";
import type { ScheduleDecision } from "../schedule/types.js";
import type { ReconcileState } from "./reconcile-step.js";
import { SOURCE_STATUS_PATH } from "./status-files.js";

/** Where the loop stood when the status branch was last written, read from its status/source.yaml. */
export interface SourcePosition {
  readonly sourceCommit: string | undefined;
  readonly renderedCommit: string | undefined;
}

/** Reads status/source.yaml; a branch without one (or none at all) has reconciled nothing. */
export function sourcePosition(files: ReadonlyMap<string, string>): SourcePosition {
  const text = files.get(SOURCE_STATUS_PATH);
  if (text === undefined) return { sourceCommit: undefined, renderedCommit: undefined };
  const value = asMap(readYaml(text, SOURCE_STATUS_PATH));
  const commit = (v: unknown) => (typeof v === "string" && /^[0-9a-f]{40}$/.test(v) ? v : undefined);
  return { sourceCommit: commit(value.sourceCommit), renderedCommit: commit(value.renderedCommit) };
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
  const apps: [string, JsonMap][] = [];
  for (const [path, text] of files) {
    if (path.startsWith("rendered/")) objects.push(renderedObject(path, text));
    const app = /^status\/apps\/(.+)\.yaml$/.exec(path)?.[1];
    if (app !== undefined) apps.push([app, asMap(readYaml(text, path))]);
  }
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

function renderedObject(path: string, text: string): RenderedObject {
  const object = asMap(readYaml(text, path));
  const app = asMap(asMap(object.metadata).labels)[APP_LABEL];
  return { cluster: path.split("/")[1] ?? "", app: typeof app === "string" ? app : "", path, object, text };
}

function workloadDecision(app: string, workload: JsonMap): WorkloadDecision {
  return {
    identity: String(workload.identity),
    app,
    resource: String(workload.resource),
    placement: String(workload.placement),
    replicas: Number(workload.replicas),
    decision: workload.decision as unknown as ScheduleDecision,
  };
}

function renderError(app: string, error: JsonMap): RenderError {
  return {
    cluster: String(error.cluster),
    app,
    resource: String(error.resource),
    file: String(error.file),
    ...(typeof error.rule === "number" ? { rule: error.rule } : {}),
    message: String(error.message),
  };
}

// The status branch is written by gitfleet; a file it cannot read was edited by hand.
function readYaml(text: string, path: string): unknown {
  try {
    return parse(text, { version: "1.1" });
  } catch (error) {
    throw new Error(
      `${path} on the status branch is not valid YAML (was it edited by hand?): ${String(error)}`,
    );
  }
}
