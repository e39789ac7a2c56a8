import type { FleetRepo } from "./fleet-repo.js";
import { type StatusCommitRequest, writeStatusCommit } from "./status-writer.js";

/** A status commit to publish: the branch, the tip it is made on, and the commit itself. */
export interface StatusPublication extends Omit<StatusCommitRequest, "gitdir" | "cache"> {
  readonly branch: string;
  /** Told once the commit's objects are written (or found unchanged), before the branch moves. */
  readonly onWritten?: (written: boolean) => void | Promise<void>;
}

/** What publishing did: nothing changed, another writer moved the branch first, or the commit landed. */
export type Published =
  | { readonly status: "unchanged" }
  | { readonly status: "moved" }
  | { readonly status: "committed"; readonly oid: string; readonly objectsWritten: number };

/**
 * Writes a status commit on top of `parent` and moves the branch to it with compare-and-swap: the
 * one way status commits reach a branch, for the reconciler (the status branch) and the agents
 * (their own branches). A branch another writer moved is left as it is; the caller decides whether
 * to make the commit again on the new tip.
 */
export async function publishStatusCommit(
  repo: FleetRepo,
  publication: StatusPublication,
): Promise<Published> {
  const { branch, onWritten, ...commit } = publication;
  const written = await writeStatusCommit({ gitdir: repo.gitdir, cache: repo.cache, ...commit });
  await onWritten?.(written.status === "written");
  if (written.status === "unchanged") return { status: "unchanged" };
  if (!(await repo.publish(branch, commit.parent, written.oid, written.objects))) return { status: "moved" };
  return { status: "committed", oid: written.oid, objectsWritten: written.objects.length };
}
