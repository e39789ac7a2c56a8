import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { beat, heartbeatBranch, readHeartbeats } from "../../src/git/agent-heartbeat.js";
import { FleetRepo } from "../../src/git/fleet-repo.js";
import { loadFleet } from "../../src/load/load-fleet.js";
import { createRepo, gitIn, tempDir } from "../helpers/git-repo.js";
import { MINIMAL_FLEET, minimalFleetWith } from "../helpers/minimal-fleet.js";

// An agent's heartbeat: a parentless commit on a ref of its own, moved by compare-and-swap — the
// status branch gets no commit and the heartbeat ref never grows a history.

const tree = minimalFleetWith({
  "clusters/west.yaml": `${MINIMAL_FLEET["clusters/west.yaml"]}  connection:\n    mode: pull\n`,
});
const model = loadFleet(tree).model;
const author = (seconds: number) => ({ name: "gitfleet agent", email: "agent@west", timestamp: seconds });

describe("agent heartbeats", () => {
  let dir = "";
  let cleanup = () => {};
  beforeEach(() => {
    ({ dir, cleanup } = tempDir("gitfleet-heartbeat-"));
    createRepo(dir, tree);
  });
  afterEach(() => cleanup());

  it("moves one ref with parentless commits, and the controller reads the latest with its claimed time", async () => {
    if (!model) throw new Error("the fleet does not load");
    const repo = await FleetRepo.open({ location: dir });
    expect(await readHeartbeats(repo, "gitfleet/status", model)).toEqual(new Map());
    expect(await beat(repo, "gitfleet/status", "west", author(1_000))).toBe(true);
    const first = await readHeartbeats(repo, "gitfleet/status", model);
    expect(first.get("west")?.claimedAt).toBe(1_000_000);
    expect(await beat(repo, "gitfleet/status", "west", author(1_030))).toBe(true);
    const second = await readHeartbeats(repo, "gitfleet/status", model);
    expect(second.get("west")?.claimedAt).toBe(1_030_000);
    expect(second.get("west")?.tip).not.toBe(first.get("west")?.tip);
    const branch = heartbeatBranch("gitfleet/status", "west");
    expect(gitIn(dir, "rev-list", "--count", branch)).toBe("1");
    // Only pull-mode clusters are read; the status branch was never written.
    expect([...second.keys()]).toEqual(["west"]);
    expect(gitIn(dir, "branch", "--list", "gitfleet/status")).toBe("");
  });
});
