import { createHmac } from "node:crypto";
import { writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { asMap } from "../../src/apimachinery/json.js";
import { FleetRepo } from "../../src/git/fleet-repo.js";
import { statusCommitChange } from "../../src/git/status-commit-change.js";
import { createLogger } from "../../src/log/logger.js";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import { Notifier } from "../../src/notify/notifier.js";
import type { SimulatedMember } from "../../src/sim/member-server.js";
import { commitTree, createRepo, gitIn, tempDir } from "../helpers/git-repo.js";
import { DIRECT_FAILOVER_PLACEMENT, MINIMAL_FLEET, webDeployment } from "../helpers/minimal-fleet.js";
import { liveObject, membersPerTest, pushController } from "../helpers/sync-fleet.js";
import { clusterYaml } from "../helpers/two-clusters.js";

/**
 * Notifications end to end: simulated members, the controller probing, reconciling and syncing
 * them, and a webhook receiver on loopback that checks each delivery's signature. The receiver is
 * down (503) while a member fails and its replicas move: the loop goes on, the deliveries wait, and
 * once the receiver is back they arrive with the ids they were first tried with.
 */
const fleet = membersPerTest("gitfleet-notify-", ["east", "west", "north"]);
const SIGNING_KEY = "notify-signing-key-for-tests";

const FLEET_YAML = `apiVersion: gitfleet.io/v1alpha1
kind: Fleet
metadata:
  name: t
spec:
  clusterHealth:
    failureThreshold: 2
    successThreshold: 2
    noExecuteAfter: 1s
  notifications:
    sinks:
      - name: oncall
        type: webhook
        secretRef: oncall
    routes:
      - events: [failover, clusterNotReady, pruneBlocked]
        sinks: [oncall]
`;

const files = (withConfig: boolean) =>
  fileTreeFromText({
    "fleet.yaml": FLEET_YAML,
    "clusters/east.yaml": clusterYaml("east"),
    "clusters/west.yaml": clusterYaml("west"),
    "clusters/north.yaml": clusterYaml("north"),
    "apps/web/app.yaml": MINIMAL_FLEET["apps/web/app.yaml"] ?? "",
    "apps/web/deployment.yaml": webDeployment(6, "100m"),
    ...(withConfig ? { "apps/web/config.yaml": MINIMAL_FLEET["apps/web/config.yaml"] ?? "" } : {}),
    "placements/web.yaml": DIRECT_FAILOVER_PLACEMENT,
  });

interface Delivery {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly answered: number;
}

/** A webhook receiver: records every delivery, answering 503 while down and 204 once up. */
async function receiver() {
  const deliveries: Delivery[] = [];
  const state = { up: false };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const answered = state.up ? 204 : 503;
      deliveries.push({ headers: req.headers, body: Buffer.concat(chunks).toString(), answered });
      res.writeHead(answered);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/gitfleet`,
    deliveries,
    state,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

const member = (name: string) => fleet.members.find((m) => m.name === name) as SimulatedMember;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("notifications", () => {
  it("delivers signed events for a failover and a blocked prune, at least once, after the receiver comes back", async () => {
    const hook = await receiver();
    closers.push(hook.close);
    const secrets = tempDir("gitfleet-notify-secrets-");
    closers.push(secrets.cleanup);
    writeFileSync(join(secrets.dir, "oncall.url"), `${hook.url}\n`);
    writeFileSync(join(secrets.dir, "oncall.signing-key"), SIGNING_KEY);

    createRepo(fleet.dir, files(true));
    const repo = await FleetRepo.open({ location: fleet.dir });
    let notifier: Notifier | undefined;
    const controller = await pushController(
      fleet.dir,
      fleet.kubeconfig,
      {},
      {
        onCommit: ({ oid }) => notifier?.committed(oid),
      },
    );
    notifier = new Notifier({
      settings: () => controller.reconciler.snapshot().state.model?.fleet?.spec.notifications,
      readChange: (commit) => statusCommitChange(repo, commit),
      secretsDir: secrets.dir,
      logger: createLogger({ level: "silent" }),
      queue: { backoffMs: 20, maxBackoffMs: 100 },
    });
    closers.push(() => notifier?.stop());
    const rounds = async (done: () => boolean | Promise<boolean>) => {
      for (let i = 0; i < 80; i++) {
        await controller.prober.probeOnce();
        await controller.round();
        if (await done()) return;
        await sleep(100);
      }
      throw new Error(`not reached: ${gitIn(fleet.dir, "log", "--format=%B", "gitfleet/status")}`);
    };
    const ready = async (name: string) =>
      Number(
        asMap(
          (
            await liveObject(member(name), "/apis/apps/v1/namespaces/shop/deployments/web").catch(
              () => undefined,
            )
          )?.status,
        ).readyReplicas ?? 0,
      );
    await rounds(async () => (await ready("east")) === 2 && (await ready("north")) === 2);

    // The receiver is down; west fails and its replicas move, the loop going on as if nothing waited.
    await member("west").faults.down();
    await rounds(async () => (await ready("east")) === 3 && (await ready("north")) === 3);
    // The config goes: one of three objects in each cluster is a third, past the 30% budget.
    commitTree(fleet.dir, files(false), "web: drop its ConfigMap");
    await rounds(() => gitIn(fleet.dir, "log", "--format=%B", "gitfleet/status").includes("prune blocked"));
    const triedWhileDown = new Set(hook.deliveries.map((d) => String(d.headers["x-gitfleet-delivery"])));
    expect(hook.deliveries.every((d) => d.answered === 503)).toBe(true);
    expect(notifier.stats().get("notify/oncall")?.backlog).toBeGreaterThanOrEqual(3);

    hook.state.up = true;
    await notifier.idle();
    const taken = hook.deliveries.filter((d) => d.answered === 204);
    const events = taken.map(
      (d) => JSON.parse(d.body) as { id: string; type: string; cluster?: string; summary: string },
    );
    // In commit order: the condition's commit (its failover subject: replicas stay, none new), then the move, then the prunes.
    expect(events.map((e) => [e.type, e.cluster])).toEqual([
      ["failover", undefined],
      ["clusterNotReady", "west"],
      ["failover", undefined],
      ["pruneBlocked", "east"],
      ["pruneBlocked", "north"],
    ]);
    expect(events[1]?.summary).toMatch(/^west is NotReady: west did not answer/);
    expect(events[2]?.summary).toMatch(
      /^failover: cluster west Unreachable for \d+s; web 2 → east \+1, north \+1$/,
    );
    expect(events[3]?.summary).toMatch(
      /^prune blocked in east: would delete 1 of 2 objects \(50%\), more than the 30% budget/,
    );
    for (const delivery of taken) {
      // Signed with the sink's key over the exact body; the idempotency key is the event's id.
      const expected = `sha256=${createHmac("sha256", SIGNING_KEY).update(delivery.body).digest("hex")}`;
      expect(delivery.headers["x-gitfleet-signature-256"]).toBe(expected);
      const id = (JSON.parse(delivery.body) as { id: string }).id;
      expect(delivery.headers["x-gitfleet-delivery"]).toBe(id);
      expect(delivery.headers["idempotency-key"]).toBe(id);
    }
    // The first event was tried while the receiver was down, with the id it was then taken with.
    expect(triedWhileDown.has(events[0]?.id ?? "")).toBe(true);
    // Each event was taken once.
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    expect(notifier.stats().get("notify/oncall")).toEqual({ backlog: 0, dropped: 0, failed: 0 });
  });
});
