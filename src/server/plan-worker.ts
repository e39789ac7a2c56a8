import { parentPort, workerData } from "node:worker_threads";
import { type PlanRevisionsInput, planRevisions, RevisionError } from "../revisions/plan-revisions.js";

// One plan, in a worker thread of its own: a realm apart from the controller (nothing a fleet repo
// does to JavaScript's built-ins here reaches it), within the memory the controller gave the worker,
// and ended by the controller when its client leaves or its time runs out.
const input = workerData as PlanRevisionsInput;
try {
  parentPort?.postMessage({ outcome: await planRevisions(input) });
} catch (error) {
  parentPort?.postMessage(
    error instanceof RevisionError
      ? { revisionError: error.message }
      : { failure: error instanceof Error ? error.name : "error" },
  );
}
