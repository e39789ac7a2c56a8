import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { loadFleet } from "../../load/load-fleet.js";
import { hostedClusters } from "../../model/controlplane/hosted-control-plane.js";
import type { FileTree } from "../../model/file-tree.js";
import { controlPlaneLines } from "../../plan/control-plane-changes.js";
import { planChange } from "../../plan/plan.js";
import { renderFleet } from "../../render/render-fleet.js";
import { readDirectoryTree } from "../../source/read-directory.js";

/** The documented hosted-clusters example fleet. */
const HOSTED_EXAMPLE = fileURLToPath(new URL("../../../../docs/examples/hosted-clusters", import.meta.url));
const CLASS_FILE = "controlplanes/standard.yaml";

/**
 * What the demo shows of hosted clusters, with no control-plane binaries needed: the example's hosted
 * cluster as written, what gitfleet renders for it in its host and in itself, and the plan of a
 * patch upgrade of its class — every image and flag that changes on the host and which API servers
 * restart. Undefined when the example is not installed (a packaged gitfleet without docs/).
 */
export async function hostedClusterPreview(): Promise<string | undefined> {
  if (!existsSync(HOSTED_EXAMPLE)) return undefined;
  const tree = await readDirectoryTree(HOSTED_EXAMPLE);
  const base = loadFleet(tree).model;
  const hosted = base ? hostedClusters(base.clusters)[0] : undefined;
  if (!base || !hosted) return undefined;
  const name = hosted.metadata.name;
  const host = hosted.spec.controlPlane?.host ?? "";
  const bumped = withBumpedPatch(tree);
  const head = bumped ? loadFleet(bumped.tree).model : undefined;
  if (!bumped || !head) return undefined;
  const before = renderFleet(base);
  const after = renderFleet(head, { previous: before });
  const count = (cluster: string, app: string) =>
    before.objects.filter((o) => o.cluster === cluster && o.app === app).length;
  const spec = new TextDecoder().decode(tree.get(`clusters/${name}.yaml`));
  const lines = [
    `hosted clusters (docs/examples/hosted-clusters): ${name}'s control plane runs in ${host}`,
    ...spec
      .trimEnd()
      .split("\n")
      .map((line) => `  | ${line}`),
    `  rendered: ${count(host, `gitfleet-cp-${name}`)} objects in ${host} (etcd is shared), ${count(name, "gitfleet-addons")} addons in ${name}; credentials are generated in ${host}, never in Git`,
    `  plan of ${CLASS_FILE} version ${bumped.from} → ${bumped.to}:`,
    ...controlPlaneLines(planChange(before, after).controlPlanes ?? []).map((line) => `    ${line}`),
  ];
  return `${lines.join("\n")}\n`;
}

// The class's version one patch up: the CVE upgrade a platform team reviews.
function withBumpedPatch(tree: FileTree): { tree: FileTree; from: string; to: string } | undefined {
  const text = new TextDecoder().decode(tree.get(CLASS_FILE));
  const match = /^ {2}version: v(\d+)\.(\d+)\.(\d+)$/m.exec(text);
  if (!match) return undefined;
  const from = `v${match[1]}.${match[2]}.${match[3]}`;
  const to = `v${match[1]}.${match[2]}.${Number(match[3]) + 1}`;
  const next = new Map(tree);
  next.set(CLASS_FILE, new TextEncoder().encode(text.replace(match[0], `  version: ${to}`)));
  return { tree: next, from, to };
}
