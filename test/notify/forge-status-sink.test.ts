import { afterEach, describe, expect, it } from "vitest";
import { openForge } from "../../src/forge/forge.js";
import { createLogger } from "../../src/log/logger.js";
import type { NotificationsSpec } from "../../src/model/types.js";
import { Notifier } from "../../src/notify/notifier.js";
import { ForgeContract } from "../helpers/forge-contract.js";

const TOKEN = "forge-sink-token";
const SOURCE = "5".repeat(40);
const STATUS = "c".repeat(40);
const contracts: ForgeContract[] = [];
afterEach(async () => {
  await Promise.all(contracts.splice(0).map((c) => c.close()));
});

describe("the forgeStatus sink", () => {
  it("puts each routed event on its source commit as gitfleet/<event>, failing for trouble, linking the status commit", async () => {
    const contract = await ForgeContract.start("gitlab", TOKEN);
    contracts.push(contract);
    const settings: NotificationsSpec = {
      sinks: [{ name: "forge", type: "forgeStatus" }],
      routes: [{ events: ["sourceInvalid", "clusterReady"], sinks: ["forge"] }],
    };
    const notifier = new Notifier({
      settings: () => settings,
      forge: openForge({
        kind: "gitlab",
        apiUrl: contract.url,
        repo: "platform/fleet",
        token: async () => TOKEN,
      }),
      dashboardUrl: "https://fleet.example.com",
      logger: createLogger({ level: "silent" }),
      readChange: async (commit) => ({
        commit,
        time: "2026-12-01T10:00:00.000Z",
        message: `Source 5555555 is invalid: 1 error\n\nSource-Commit: ${SOURCE}\nGitfleet-Controller: c\nGitfleet-Event: invalid\n`,
        files: [],
      }),
    });
    notifier.committed(STATUS);
    await notifier.idle();
    expect(contract.statuses.get(SOURCE)).toEqual([
      {
        state: "failed",
        name: "gitfleet/sourceInvalid",
        description: "Source 5555555 is invalid: 1 error",
        target_url: `https://fleet.example.com/#/commits/${STATUS}`,
      },
    ]);
    expect(notifier.stats().get("notify/forge")).toEqual({ backlog: 0, dropped: 0, failed: 0 });
  });

  it("reads nothing when no route is configured", async () => {
    let read = 0;
    const notifier = new Notifier({
      settings: () => undefined,
      logger: createLogger({ level: "silent" }),
      readChange: async (commit) => {
        read++;
        return { commit, time: "", message: "", files: [] };
      },
    });
    notifier.committed(STATUS);
    await notifier.idle();
    expect(read).toBe(0);
  });
});
