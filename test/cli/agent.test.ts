import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { BASE_SPEC, fleetFiles } from "../helpers/fleet-spec.js";
import { createRepo, gitIn, tempDir } from "../helpers/git-repo.js";
import { writeKubeconfig } from "../helpers/member.js";
import { sshSigningKey } from "../helpers/sync-fleet.js";

/** `gitfleet agent` as it runs in a member: a real process, its cluster reached through a kubeconfig. */
const BIN = fileURLToPath(new URL("../../bin/gitfleet.js", import.meta.url));
let dir: string;
let cleanup: () => void;
let north: SimulatedMember;

beforeEach(async () => {
  ({ dir, cleanup } = tempDir("gitfleet-cli-agent-"));
  mkdirSync(join(dir, "fleet"));
  north = await startMember({ name: "north" });
});
afterEach(async () => {
  await north.close();
  cleanup();
});

function gitfleet(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      [BIN, ...args],
      { encoding: "utf8", timeout: 60_000, env },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

describe("gitfleet agent", () => {
  it("applies rendered/<cluster>/ once and commits its report", async () => {
    const files = new Map(fleetFiles(BASE_SPEC));
    const cluster = new TextDecoder().decode(files.get("clusters/north.yaml"));
    files.set("clusters/north.yaml", new TextEncoder().encode(`${cluster}  connection:\n    mode: pull\n`));
    createRepo(join(dir, "fleet"), files);
    const kubeconfig = writeKubeconfig(join(dir, "kubeconfig"), [north]);
    const key = sshSigningKey(dir);
    const trusted = join(dir, "allowed_signers");
    writeFileSync(trusted, `controller ${readFileSync(`${key}.pub`, "utf8")}`);
    const reconciled = await gitfleet([
      ...["reconcile", "--repo", join(dir, "fleet"), "--once", "--no-sync"],
      ...["--signing-key", key],
    ]);
    expect(reconciled.code).toBe(0);

    const result = await gitfleet([
      "agent",
      "--cluster",
      "north",
      "--repo",
      join(dir, "fleet"),
      "--kubeconfig",
      kubeconfig,
      "--trusted-keys",
      trusted,
      "--once",
      "--log-level",
      "error",
    ]);
    expect(result.stderr).toBe("");
    expect(result.stdout).toMatch(
      /^north: (\d+) objects, \1 created, 0 updated, 0 pruned; report committed\n$/,
    );
    // The report goes to the agent's own branch; the status branch stays the controller's.
    expect(gitIn(join(dir, "fleet"), "log", "-1", "--format=%an <%ae>", "gitfleet/status-agents/north")).toBe(
      "gitfleet agent <gitfleet-agent@north>",
    );
    expect(gitIn(join(dir, "fleet"), "log", "-1", "--format=%an", "gitfleet/status")).toBe("gitfleet");
    const cart = await fetch(`${north.url}/apis/apps/v1/namespaces/shop/deployments/cart`);
    expect(cart.status).toBe(200);
  });

  it("refuses to guess a cluster it is not inside", async () => {
    createRepo(join(dir, "fleet"), fleetFiles(BASE_SPEC));
    const env = { ...process.env };
    delete env.KUBERNETES_SERVICE_HOST;
    const result = await gitfleet(
      ["agent", "--cluster", "north", "--repo", join(dir, "fleet"), "--once"],
      env,
    );
    expect(result.code).toBe(64);
    expect(result.stderr).toMatch(
      /not running inside a cluster \(no KUBERNETES_SERVICE_HOST\): pass --kubeconfig/,
    );
  });
});

describe("gitfleet agent without trusted keys", () => {
  it("refuses to start: it applies only what a trusted key signed", async () => {
    createRepo(join(dir, "fleet"), fleetFiles(BASE_SPEC));
    const kubeconfig = writeKubeconfig(join(dir, "kubeconfig"), [north]);
    const result = await gitfleet([
      ...["agent", "--cluster", "north", "--repo", join(dir, "fleet"), "--kubeconfig", kubeconfig],
      "--once",
    ]);
    expect(result.code).toBe(64);
    expect(result.stderr).toMatch(/--trusted-keys is required/);
    expect((await fetch(`${north.url}/apis/apps/v1/namespaces/shop/deployments`)).status).toBe(200);
    const listed = (await (await fetch(`${north.url}/apis/apps/v1/namespaces/shop/deployments`)).json()) as {
      items: unknown[];
    };
    expect(listed.items).toEqual([]);
  });
});
