import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";
import { resolveControlPlane } from "../model/controlplane/hosted-control-plane.js";
import type { FileTree } from "../model/file-tree.js";
import type { Problem } from "../model/problem.js";
import type { Cluster, ControlPlaneClass, FleetModel } from "../model/types.js";
import { locateInTree } from "./replicas-under-autoscalers.js";

// A hosted cluster whose controlPlane.host a change moves starts on the new host from nothing — an
// empty etcd, new CAs — unless the change also restores it (an EtcdRestore of the cluster). Said as
// a warning at the host line, with what to add. Pure.

/** A warning for each hosted cluster the change moves to another host without an EtcdRestore of it. */
export function hostsMovedWithoutRestore(
  base: FleetModel | undefined,
  head: FleetModel,
  headTree: FileTree,
): Problem[] {
  if (!base) return [];
  const before = new Map(base.clusters.map((c) => [c.metadata.name, c.spec.controlPlane?.host]));
  const restored = new Set(head.etcdRestores.map((r) => r.spec.cluster));
  const problems: Problem[] = [];
  for (const cluster of head.clusters) {
    const name = cluster.metadata.name;
    const from = before.get(name);
    const to = cluster.spec.controlPlane?.host;
    if (!from || !to || from === to || restored.has(name)) continue;
    problems.push({
      ...locateInTree(headTree, cluster.origin, ["spec", "controlPlane", "host"]),
      severity: "warning",
      code: "HOST_MOVED_WITHOUT_RESTORE",
      message: `${name}'s control plane moves from ${from} to ${to} with nothing restored: it starts there with an empty etcd and new CAs (kubeconfigs and nodes of ${name} stop working); to bring it back with its data and CAs, add an EtcdRestore of ${name} with backup: latest in the same commit`,
    });
  }
  return problems;
}

/** What moving every control plane off a host gives: the files to write, and each cluster moved. */
export interface HostMove {
  /** The fleet repo's files to write, by path: each moved Cluster's, and an EtcdRestore each. */
  readonly files: ReadonlyMap<string, string>;
  /** Per moved cluster, the restore that brings it back (its name and file). */
  readonly moved: readonly { readonly cluster: string; readonly restore: string; readonly file: string }[];
}

/**
 * The change that moves every control plane `from` hosts to `to`, each restored there from its
 * newest off-host backup (`backup: latest`): its Cluster file with controlPlane.host edited in place
 * (the rest of the file as written), and an EtcdRestore of it. Refused (an Error saying why, for
 * every cluster at once) when a cluster cannot come back that way — its class sends no backup off
 * the host, it keeps its data in a shared etcd, or an EtcdRestore of it is still in the repo — or
 * when `to` is not a cluster of the fleet or is itself moved. Pure.
 */
export function planHostMove(model: FleetModel, tree: FileTree, from: string, to: string): HostMove {
  if (from === to) throw new Error(`--from and --to are both ${from}`);
  const target = model.clusters.find((c) => c.metadata.name === to);
  if (!target) throw new Error(`${to} is not a cluster of the fleet (clusters/${to}.yaml): add it first`);
  const moving = model.clusters.filter((c) => c.spec.controlPlane?.host === from);
  if (moving.length === 0) throw new Error(`${from} hosts no control plane`);
  if (target.spec.controlPlane?.host === from)
    throw new Error(`${to}'s own control plane runs in ${from}: it cannot host what ${from} hosted`);
  const classes = new Map(model.controlPlaneClasses.map((c) => [c.metadata.name, c]));
  const taken = new Set([...tree.keys()]);
  const refusals: string[] = [];
  const files = new Map<string, string>();
  const moved: { cluster: string; restore: string; file: string }[] = [];
  for (const cluster of moving) {
    const name = cluster.metadata.name;
    const why = cannotRestore(model, cluster, classes);
    if (why) {
      refusals.push(`${name}: ${why}`);
      continue;
    }
    const edited = withHost(
      files.get(cluster.origin.file) ?? fileText(tree, cluster.origin.file),
      tree,
      cluster,
      from,
      to,
    );
    if (typeof edited !== "string") {
      refusals.push(`${name}: ${edited.why}`);
      continue;
    }
    files.set(cluster.origin.file, edited);
    const restore = restoreName(name, to, (resolveControlPlane(cluster, classes)?.etcd.replicas ?? 1) > 1);
    const file = `controlplanes/${restore}.yaml`;
    if (taken.has(file)) {
      refusals.push(`${name}: ${file} is already in the repo`);
      continue;
    }
    taken.add(file);
    files.set(
      file,
      `apiVersion: gitfleet.io/v1alpha1\nkind: EtcdRestore\nmetadata:\n  name: ${restore}\nspec:\n  cluster: ${name}\n  backup: latest # its newest off-host backup, with its CAs and service-account key\n`,
    );
    moved.push({ cluster: name, restore, file });
  }
  if (refusals.length > 0)
    throw new Error(
      `nothing moved: ${refusals.length} of ${moving.length} control plane(s) of ${from} cannot come back on ${to} from an off-host backup:\n${refusals.map((r) => `  ${r}`).join("\n")}`,
    );
  return { files, moved };
}

// Why a cluster cannot be brought back from an off-host backup, or undefined.
function cannotRestore(
  model: FleetModel,
  cluster: Cluster,
  classes: ReadonlyMap<string, ControlPlaneClass>,
): string | undefined {
  const plane = resolveControlPlane(cluster, classes);
  if (!plane) return `its class ${cluster.spec.controlPlane?.class ?? ""} is not in the repo`;
  if (plane.etcd.mode === "Shared")
    return `it keeps its data in the shared etcd ${plane.etcd.name}, which gitfleet does not restore`;
  if (!plane.etcd.backup.offHost)
    return `its class ${cluster.spec.controlPlane?.class ?? ""} sends no backup off the host (etcd.backup.offHost)`;
  const earlier = model.etcdRestores.find((r) => r.spec.cluster === cluster.metadata.name);
  if (earlier)
    return `EtcdRestore ${earlier.metadata.name} (${earlier.origin.file}) is still in the repo: remove it first (one restore per cluster)`;
  return undefined;
}

// The cluster file's text with controlPlane.host's value replaced where it is written (quoted or not).
function withHost(
  text: string,
  tree: FileTree,
  cluster: Cluster,
  from: string,
  to: string,
): string | { why: string } {
  const at = locateInTree(tree, cluster.origin, ["spec", "controlPlane", "host"]);
  const lines = text.split("\n");
  const line = lines[at.line - 1] ?? "";
  const before = line.slice(0, at.column - 1);
  const rest = line.slice(at.column - 1);
  const written = [from, `"${from}"`, `'${from}'`].find((form) => {
    const next = rest.charAt(form.length);
    return rest.startsWith(form) && (next === "" || /[\s,}#]/.test(next));
  });
  if (!written)
    return {
      why: `${cluster.origin.file}:${at.line}:${at.column} does not read as host ${from}: edit it by hand`,
    };
  lines[at.line - 1] = `${before}${written.replace(from, to)}${rest.slice(written.length)}`;
  return lines.join("\n");
}

function fileText(tree: FileTree, path: string): string {
  return new TextDecoder("utf-8").decode(tree.get(path) ?? new Uint8Array());
}

// The restore's name: <cluster>-to-<host>, or one derived from both when that leaves its Jobs no room.
function restoreName(cluster: string, to: string, replicated: boolean): string {
  const name = `${cluster}-to-${to}`;
  const max = 63 - "etcd-restore-".length - (replicated ? 2 : 0);
  if (name.length <= max) return name;
  return `move-${bytesToHex(sha256(utf8ToBytes(`${cluster}/${to}`))).slice(0, 16)}`;
}
