import fs from "node:fs";
import { join, relative } from "node:path";
import git from "isomorphic-git";
import { asMap, type JsonMap } from "../../apimachinery/json.js";
import { MemberClient } from "../../kube/member-client.js";
import type { FleetModel } from "../../model/types.js";
import type { RenderedObject } from "../../render/render-result.js";
import { APP_LABEL, MANAGED_BY, PLACEMENT_ANNOTATION } from "../../render/tracking.js";
import { memberClientConfig } from "../../sim/kubeconfig.js";
import type { SimulatedMember } from "../../sim/member-server.js";
import { readDirectoryTree } from "../../source/read-directory.js";

/**
 * The apps the example's Migration brings under gitfleet run already, as a team deployed them by
 * hand: their rendered objects without gitfleet's labels, applied by another field manager.
 */
export async function deployByHand(
  model: FleetModel,
  rendered: readonly RenderedObject[],
  members: readonly SimulatedMember[],
): Promise<{ apps: string[]; clusters: number; count: number }> {
  const apps = [...new Set(model.migrations.flatMap((m) => m.spec.batches.flatMap((b) => b.apps)))].sort();
  const objects = rendered.filter((o) => apps.includes(o.app));
  const clusters = new Set<string>();
  for (const member of members) {
    const client = new MemberClient(member.name, memberClientConfig(member), { fieldManager: "kubectl" });
    for (const object of objects.filter((o) => o.cluster === member.name)) {
      const namespace = asMap(object.object.metadata).namespace;
      if (typeof namespace === "string")
        await client.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }, false);
      await client.apply(withoutTracking(object.object), false);
      clusters.add(member.name);
    }
  }
  return { apps, clusters: clusters.size, count: objects.length };
}

export function withoutTracking(object: JsonMap): JsonMap {
  const metadata = asMap(object.metadata);
  const labels = { ...asMap(metadata.labels) };
  delete labels[MANAGED_BY.key];
  delete labels[APP_LABEL];
  const annotations = { ...asMap(metadata.annotations) };
  delete annotations[PLACEMENT_ANNOTATION];
  return { ...object, metadata: { ...metadata, labels, annotations } };
}

export async function commitAll(dir: string): Promise<void> {
  await git.init({ fs, dir, defaultBranch: "main" });
  const files = [...(await readDirectoryTree(dir)).keys()];
  for (const filepath of files) await git.add({ fs, dir, filepath: relative(dir, join(dir, filepath)) });
  await git.commit({
    fs,
    dir,
    message: "The example fleet",
    author: { name: "gitfleet demo", email: "gitfleet@localhost" },
  });
}
