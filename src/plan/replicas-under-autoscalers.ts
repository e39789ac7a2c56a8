import { targetOf } from "../autoscale/autoscale-step.js";
import type { FileTree } from "../model/file-tree.js";
import type { Origin } from "../model/fleet-object.js";
import { identityOf } from "../model/identity.js";
import { indexInterpreters } from "../model/interpreter-index.js";
import type { Problem, SourceLocation } from "../model/problem.js";
import type { FleetModel, Resource } from "../model/types.js";
import { readReplicas } from "../model/workload-replicas.js";
import { locate, parseSourceFile } from "../model/yaml-source.js";

// A change to a workload's `replicas` while an autoscaler owns its count does nothing: the
// FederatedHPA's (or CronScale's) total, recorded on the status branch, is what the clusters run.
// Said as a warning at the changed line, naming the autoscaler and what to change instead. Pure.

/** Warnings for each workload whose template replicas differ between `base` and `head` while an autoscaler owns them. */
export function replicasUnderAutoscalers(
  base: FleetModel | undefined,
  head: FleetModel,
  headTree: FileTree,
): Problem[] {
  if (!base) return [];
  const owners = autoscalersByTarget(head);
  if (owners.size === 0) return [];
  const baseInterpreters = indexInterpreters(base);
  const headInterpreters = indexInterpreters(head);
  const before = new Map(base.apps.flatMap((a) => a.resources).map((r) => [identity(r), r]));
  const problems: Problem[] = [];
  for (const resource of head.apps.flatMap((a) => a.resources)) {
    const owner = owners.get(identity(resource));
    const old = before.get(identity(resource));
    if (!owner || !old) continue;
    const from = readReplicas(old, baseInterpreters);
    const to = readReplicas(resource, headInterpreters);
    if (from === to) continue;
    const path = (headInterpreters(resource)?.spec.replicasPath ?? "spec.replicas").split(".");
    problems.push({
      ...position(headTree, resource, path),
      severity: "warning",
      code: "REPLICAS_UNDER_AUTOSCALER",
      message: `replicas ${from} → ${to} changes nothing: ${owner.what} (${owner.file}) owns this workload's count; ${owner.instead}`,
    });
  }
  return problems;
}

interface Owner {
  readonly what: string;
  readonly file: string;
  readonly instead: string;
}

function autoscalersByTarget(model: FleetModel): Map<string, Owner> {
  const owners = new Map<string, Owner>();
  for (const hpa of model.federatedHPAs)
    owners.set(targetOf(model, hpa), {
      what: `FederatedHPA ${hpa.metadata.name}`,
      file: hpa.origin.file,
      instead: "change its minReplicas/maxReplicas to move the total",
    });
  for (const cron of model.cronScales) {
    if (cron.spec.scaleTargetRef.kind === "FederatedHPA") continue;
    const target = targetOf(model, cron);
    if (!owners.has(target))
      owners.set(target, {
        what: `CronScale ${cron.metadata.name}`,
        file: cron.origin.file,
        instead: "change its rules' targetReplicas",
      });
  }
  return owners;
}

function identity(resource: Resource): string {
  return identityOf(resource.group, resource.kind, resource.namespace, resource.name);
}

// The line and column of the replicas field (the document, when it cannot be read again).
function position(tree: FileTree, resource: Resource, path: readonly string[]): SourceLocation {
  return locateInTree(tree, resource.origin, path);
}

/** The line and column of a path in a document of the tree (the file's start, when it cannot be read again). */
export function locateInTree(
  tree: FileTree,
  origin: Origin,
  path: readonly (string | number)[],
): SourceLocation {
  const bytes = tree.get(origin.file);
  const document = bytes
    ? parseSourceFile(origin.file, bytes).documents.find((d) => d.index === origin.index)
    : undefined;
  if (!document) return { file: origin.file, line: 1, column: 1, path: "" };
  const item = origin.item;
  return locate(item === undefined ? document : { ...document, item }, path);
}
