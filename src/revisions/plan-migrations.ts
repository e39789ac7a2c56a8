import type { FileTree } from "../model/file-tree.js";
import type { FleetModel } from "../model/types.js";
import {
  compareWithLive,
  type MigrationPlan,
  migrationChanges,
  startingObjects,
} from "../plan/migration-plan.js";
import { statusFromFile } from "../policy/migrations.js";
import type { RenderedObject } from "../render/render-result.js";
import { migrationStatusPath } from "../status/migration-file.js";
import { readLive } from "./read-live.js";

export interface PlanMigrationsInput {
  readonly base: FleetModel | undefined;
  readonly head: FleetModel;
  readonly objects: readonly RenderedObject[];
  /** The status branch's tree, if the repository has one. */
  readonly statusTree: FileTree | undefined;
  /** Read the live objects of starting batches through this kubeconfig. */
  readonly kubeconfig?: string;
  /** The directory Clusters' kubeconfigFile names are read from. */
  readonly kubeconfigDir?: string;
}

/**
 * The migration part of `gitfleet plan`: the batches the change decides (from the source and the
 * status branch) and, with a kubeconfig, each object of a starting batch compared with what runs.
 * Reads only: GETs, never a write. Undefined when the head has no Migration.
 */
export async function planMigrations(input: PlanMigrationsInput): Promise<MigrationPlan | undefined> {
  if (input.head.migrations.length === 0) return undefined;
  const decoder = new TextDecoder();
  const status = (name: string) => {
    const bytes = input.statusTree?.get(migrationStatusPath(name));
    return statusFromFile(bytes ? decoder.decode(bytes) : undefined);
  };
  const batches = migrationChanges({ base: input.base, head: input.head, objects: input.objects, status });
  const starting = startingObjects(batches, input.objects);
  if (!input.kubeconfig || starting.length === 0)
    return { batches, adoptions: compareWithLive(starting, undefined), comparedWithLive: false };
  const live = await readLive(input.head, starting, {
    kubeconfig: input.kubeconfig,
    ...(input.kubeconfigDir ? { kubeconfigDir: input.kubeconfigDir } : {}),
    env: process.env,
  });
  return {
    batches,
    adoptions: compareWithLive(starting, (o) => live.get(o.path)),
    comparedWithLive: true,
  };
}
