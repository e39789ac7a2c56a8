import type { FleetEvent } from "../../src/observe/fleet-events.js";

/** The n-th failover event of one status commit: a summary with characters a sink must escape. */
export const failoverEvent = (n: number): FleetEvent => ({
  id: `${"c".repeat(40)}/failover/${n}`,
  type: "failover",
  time: "2026-12-01T10:00:00.000Z",
  summary: `failover <${n}> & more`,
  statusCommit: "c".repeat(40),
});
