/**
 * A reconcile that cannot proceed until the operator changes something: the status branch equals the
 * source branch, the source branch does not exist, its tip is a status commit. Trying again changes
 * nothing, so nothing tries again on a timer: `reconcile --once` exits 1 with the message, and `run`
 * reports it on /readyz and in the log and waits for a push (a webhook) or a restart.
 */
export class TerminalError extends Error {
  override readonly name = "TerminalError";
}

/** A reconcile that failed for a reason that may pass (contention, the network): tried again with backoff. */
export class ReconcileError extends Error {
  override readonly name = "ReconcileError";
}

/** Whether an error is one retrying cannot fix. */
export function isTerminal(error: unknown): error is TerminalError {
  return error instanceof TerminalError;
}
