import type { FleetRepo } from "../git/fleet-repo.js";
import { topLevelNames } from "../git/read-tree.js";
import { type Published, publishStatusCommit } from "../git/status-branch.js";
import type { CommitAuthor } from "../git/status-writer.js";
import {
  CONTROLLER_TRAILER,
  EVENT_TRAILER,
  hasStatusTrailers,
  SOURCE_COMMIT_TRAILER,
} from "../model/trailers.js";
import { OWNED_DIRECTORIES } from "../status/layout.js";
import { eventKindOf, messageText, type StatusMessage } from "../status/status-message.js";
import { TerminalError } from "./errors.js";

/** Where and as whom status commits are published. */
export interface StatusWriter {
  readonly repo: FleetRepo;
  readonly statusBranch: string;
  /** Names this controller in the `Gitfleet-Controller` trailer. */
  readonly controllerId: string;
  readonly author: CommitAuthor;
  readonly sign?: (payload: string) => Promise<string>;
  /** Checked right before the branch moves: throws when this process may not write. */
  readonly fence?: () => void;
}

/** One status commit: its parent, its files, its message and the source commit it records. */
export interface StatusCommit {
  readonly parent: string | undefined;
  readonly changes: ReadonlyMap<string, string | null>;
  readonly message: StatusMessage;
  readonly sourceCommit: string;
  /** Told once the objects are written, before the fence and the branch's move. */
  readonly onWritten?: (written: boolean) => Promise<void>;
}

/**
 * Publishes one status commit with compare-and-swap, with the trailers that name its source commit,
 * the controller and the event it records (the message's first kind).
 */
export function publishStatus(writer: StatusWriter, commit: StatusCommit): Promise<Published> {
  const { onWritten } = commit;
  return publishStatusCommit(writer.repo, {
    branch: writer.statusBranch,
    onWritten: async (written) => {
      await onWritten?.(written);
      writer.fence?.();
    },
    parent: commit.parent,
    changes: commit.changes,
    message: messageText(commit.message),
    trailers: [
      [SOURCE_COMMIT_TRAILER, commit.sourceCommit],
      [CONTROLLER_TRAILER, writer.controllerId],
      [EVENT_TRAILER, eventKindOf(commit.message)],
    ],
    author: writer.author,
    ...(writer.sign ? { sign: writer.sign } : {}),
  });
}

/**
 * gitfleet never reacts to its own commits: a source branch whose tip is a status commit is
 * misconfigured. A status commit is one whose trailer block (its last paragraph, not lines quoted
 * anywhere in a message) names a source commit and a controller, and whose tree holds nothing but
 * what gitfleet writes — so a person's commit that quotes a status commit is reconciled as usual.
 */
export async function refuseOwnCommit(repo: FleetRepo, branch: string, head: string): Promise<void> {
  if (!hasStatusTrailers(await repo.commitMessage(head))) return;
  const names = await topLevelNames(repo.gitdir, repo.cache, await repo.treeOf(head));
  if (names.some((name) => !OWNED_DIRECTORIES.includes(name))) return;
  throw new TerminalError(
    `the tip of ${branch} (${head.slice(0, 7)}) is a gitfleet status commit; point --branch at the branch people write`,
  );
}
