import { afterEach, describe, expect, it } from "vitest";
import { CommitStatuses } from "../../src/controller/commit-statuses.js";
import type { ReconcileReport } from "../../src/controller/reconciler.js";
import { openForge } from "../../src/forge/forge.js";
import { createLogger } from "../../src/log/logger.js";
import { ForgeContract } from "../helpers/forge-contract.js";

const TOKEN = "status-test-token";
const sha = (n: number) => n.toString(16).padStart(40, "0");
const contracts: ForgeContract[] = [];
afterEach(async () => {
  await Promise.all(contracts.splice(0).map((c) => c.close()));
});

function report(source: string, valid: boolean, statusCommit = "b".repeat(40)): ReconcileReport {
  return {
    result: "committed",
    sourceCommit: source,
    statusCommit,
    valid,
    errors: valid ? 0 : 2,
    ...(valid ? {} : { firstError: "apps/web/app.yaml:4:3: error: /spec: missing replicas [SCHEMA]" }),
    attempts: 1,
    filesChanged: 1,
    durationsMs: {},
  };
}

async function statusesOn(options: { maxBacklog?: number; gate?: Promise<void> } = {}) {
  const contract = await ForgeContract.start("gitea", TOKEN);
  contracts.push(contract);
  const forge = openForge({
    kind: "gitea",
    apiUrl: contract.url,
    repo: "acme/fleet",
    token: async () => {
      await options.gate;
      return TOKEN;
    },
    backoffMs: 1,
  });
  const statuses = new CommitStatuses({
    forge,
    logger: createLogger({ level: "silent" }),
    dashboardUrl: "https://fleet.example.com/",
    ...(options.maxBacklog ? { maxBacklog: options.maxBacklog } : {}),
  });
  return { contract, statuses };
}

describe("the controller's commit statuses", () => {
  it("posts pending when a tip is seen, then success linking the status commit, and nothing again for the same tip", async () => {
    const { contract, statuses } = await statusesOn();
    statuses.seen(sha(1));
    statuses.reconciled(report(sha(1), true));
    await statuses.idle();
    statuses.seen(sha(1));
    statuses.reconciled({ ...report(sha(1), true), result: "up-to-date" });
    statuses.seen(sha(2));
    statuses.reconciled(report(sha(2), false));
    await statuses.idle();
    const states = (commit: string) => (contract.statuses.get(commit) ?? []).map((s) => s.state);
    expect(states(sha(1))).toEqual(["pending", "success"]);
    expect(contract.statuses.get(sha(1))?.[1]).toMatchObject({
      context: "gitfleet/reconcile",
      target_url: `https://fleet.example.com/#/commits/${"b".repeat(40)}`,
      description: `reconciled: status commit ${"b".repeat(12)}`,
    });
    expect(states(sha(2))).toEqual(["pending", "failure"]);
    expect(contract.statuses.get(sha(2))?.[1]?.description).toBe(
      "invalid (2 errors): apps/web/app.yaml:4:3: error: /spec: missing replicas [SCHEMA]",
    );
  });

  it("never holds up its caller while the forge hangs; keeps a bounded backlog, newest status per commit", async () => {
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const { contract, statuses } = await statusesOn({ maxBacklog: 3, gate });
    // The first pending is in flight (waiting on the hung forge) and counts towards the three; each
    // commit's success replaces its pending where it waits, and the oldest commits go (1's success,
    // then 2, 3 and 4).
    for (let n = 1; n <= 6; n++) {
      statuses.seen(sha(n));
      statuses.reconciled(report(sha(n), true));
    }
    expect(statuses.backlog).toBe(3);
    expect(statuses.dropped).toBe(4);
    open();
    await statuses.idle();
    expect(statuses.backlog).toBe(0);
    // The commit in flight got its pending; the two kept got their final status only.
    expect([...contract.statuses.keys()]).toEqual([sha(1), sha(5), sha(6)]);
    expect(contract.statuses.get(sha(6))?.map((s) => s.state)).toEqual(["success"]);
  });

  it("counts a status the forge never took, and carries on with the next", async () => {
    const { contract, statuses } = await statusesOn();
    contract.faults.push(...Array.from({ length: 5 }, () => ({ status: 503 })));
    statuses.reconciled(report(sha(1), true));
    statuses.reconciled(report(sha(2), true));
    await statuses.idle();
    expect(statuses.failed).toBe(1);
    expect([...contract.statuses.keys()]).toEqual([sha(2)]);
    // The next poll reporting the commit whose status never landed posts it again.
    statuses.reconciled({ ...report(sha(1), true), result: "up-to-date" });
    await statuses.idle();
    expect(contract.statuses.get(sha(1))?.map((s) => s.state)).toEqual(["success"]);
  });
});
