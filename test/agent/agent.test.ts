import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { asList, asMap, type JsonMap } from "../../src/apimachinery/json.js";
import { SopsKeyring } from "../../src/credentials/sops-keyring.js";
import { commitVerifier } from "../../src/git/commit-verifier.js";
import { FleetRepo } from "../../src/git/fleet-repo.js";
import { MemberClient } from "../../src/kube/member-client.js";
import { createLogger } from "../../src/log/logger.js";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import { readEmittedYaml } from "../../src/render/yaml-reader.js";
import { memberClientConfig } from "../../src/sim/kubeconfig.js";
import type { SimulatedMember } from "../../src/sim/member-server.js";
import { appStatusPath } from "../../src/status/status-files.js";
import { BASE_SPEC, type FleetSpec, fleetFiles } from "../helpers/fleet-spec.js";
import { branchFiles, commitTree, createRepo, gitIn, tempDir } from "../helpers/git-repo.js";
import { ageKey, ageKeyFile, sopsEncrypt } from "../helpers/sops.js";
import { kubeconfigNextTo, pushController, sshSigningKey, startMembers } from "../helpers/sync-fleet.js";

/**
 * Pull mode: the agent inside "north" applies rendered/north/ with the same code as push mode and
 * reports to the status branch, where the controller folds its report into status/apps/. Run once
 * with north in push mode and once in pull mode, north ends holding the same objects.
 */
let roots: { dir: string; cleanup: () => void }[] = [];
let members: SimulatedMember[] = [];
const logger = createLogger({ level: "silent" });

beforeEach(() => {
  roots = [];
  members = [];
});
afterEach(async () => {
  await Promise.all(members.map((m) => m.close()));
  for (const root of roots) root.cleanup();
});

function fleetWithNorthIn(mode: "push" | "pull", spec: FleetSpec = BASE_SPEC, readable = false) {
  const files = new Map(fleetFiles(spec));
  const north = new TextDecoder().decode(files.get("clusters/north.yaml"));
  const context = readable ? "    context: north\n" : "";
  files.set(
    "clusters/north.yaml",
    new TextEncoder().encode(`${north}  connection:\n    mode: ${mode}\n${context}`),
  );
  return files;
}

async function setUp(
  mode: "push" | "pull",
  options: { push?: boolean; readable?: boolean; files?: Record<string, string>; keyring?: SopsKeyring } = {},
) {
  const root = tempDir(`gitfleet-agent-${mode}-`);
  roots.push(root);
  const started = await startMembers(
    BASE_SPEC.clusters.map((c) => c.name),
    kubeconfigNextTo(root.dir),
  );
  members.push(...started.members);
  createRepo(
    root.dir,
    new Map([
      ...fleetWithNorthIn(mode, BASE_SPEC, options.readable),
      ...fileTreeFromText(options.files ?? {}),
    ]),
  );
  // The controller signs its status commits; the agent applies only what that key signed.
  const signingKey = sshSigningKey(`${root.dir}/..`, `${root.dir.split("/").pop()}.key`);
  const { round, controller } = await pushController(root.dir, started.kubeconfig, {}, { signingKey });
  const verify = await commitVerifier({ signingKey: { format: "ssh", key: signingKey } });
  if (!verify) throw new Error("no verifier");
  const north = started.members.find((m) => m.name === "north") as SimulatedMember;
  const agent = new Agent({
    repo: await FleetRepo.open({ location: root.dir }),
    cluster: "north",
    branch: "main",
    statusBranch: "gitfleet/status",
    client: new MemberClient("north", memberClientConfig(north)),
    logger,
    author: { name: "gitfleet agent", email: "agent@example.com" },
    push: options.push ?? true,
    verify,
    ...(options.keyring ? { keyring: options.keyring } : {}),
  });
  return { dir: root.dir, north, agent, round, controller, signingKey };
}

// north's gitfleet objects, without what the server fills in: what the two modes must agree on.
async function objectsIn(member: SimulatedMember): Promise<Record<string, JsonMap>> {
  const found: Record<string, JsonMap> = {};
  for (const path of ["/apis/apps/v1/deployments", "/api/v1/configmaps"]) {
    const list = asMap(await (await fetch(`${member.url}${path}?labelSelector=gitfleet.io%2Fapp`)).json());
    for (const item of asList(list.items).map((i) => asMap(i))) {
      const metadata = asMap(item.metadata);
      found[`${String(item.kind ?? path)}/${String(metadata.namespace)}/${String(metadata.name)}`] = {
        labels: asMap(metadata.labels),
        annotations: asMap(metadata.annotations),
        spec: asMap(item.spec),
        data: asMap(item.data),
      };
    }
  }
  return found;
}

describe("the pull-mode agent", () => {
  it("opens a sops-encrypted Secret with its own age key, and applies nothing of it without one", async () => {
    const key = await ageKey();
    const secret = sopsEncrypt(
      "apiVersion: v1\nkind: Secret\nmetadata:\n  name: jobs-token\n  namespace: batch\nstringData:\n  token: agent-test-only\n",
      [key.recipient],
    );
    const files = { "apps/jobs/secret.yaml": secret };
    const secretIn = async (member: SimulatedMember) => {
      const response = await fetch(`${member.url}/api/v1/namespaces/batch/secrets/jobs-token`);
      return response.status === 404 ? undefined : asMap(asMap(await response.json()).data);
    };
    const without = await setUp("pull", { files });
    await without.round();
    await without.agent.round();
    expect(await secretIn(without.north)).toBeUndefined();
    expect(
      branchFiles(without.dir, "gitfleet/status-agents/north").get("status/agents/north.yaml"),
    ).toContain("apps/jobs/secret.yaml is encrypted with sops and this controller holds no age key");
    const opened = await setUp("pull", { files, keyring: SopsKeyring.fromKeyFile(ageKeyFile([key])) });
    await opened.round();
    await opened.agent.round();
    expect(await secretIn(opened.north)).toEqual({
      token: Buffer.from("agent-test-only").toString("base64"),
    });
  });

  it("without push rights keeps its report in its cluster, where the controller reads it", async () => {
    const pull = await setUp("pull", { push: false, readable: true });
    await pull.round();
    const round = await pull.agent.round();
    expect(round.report).toBe("kept");
    expect(branchFiles(pull.dir, "gitfleet/status").has("status/agents/north.yaml")).toBe(false);
    await pull.round();
    const cart = asMap(
      asMap(readEmittedYaml(branchFiles(pull.dir, "gitfleet/status").get(appStatusPath("cart")) ?? ""))
        .observed,
    );
    expect(asMap(cart.north).syncedCommit).toMatch(/^[0-9a-f]{40}$/);
    expect(asMap(cart.north).health).not.toBe("Unknown");
  });

  it("converges its cluster to the state push mode gives, and reports through the status branch", async () => {
    const push = await setUp("push");
    await push.round();
    const pushed = await objectsIn(push.north);
    expect(Object.keys(pushed).length).toBeGreaterThan(2);

    const pull = await setUp("pull");
    await pull.round();
    // The controller does not touch a pull-mode cluster.
    expect(await objectsIn(pull.north)).toEqual({});
    const first = await pull.agent.round();
    expect(first.report).toBe("committed");
    expect(first.result?.objects.every((o) => o.action === "created")).toBe(true);
    expect(await objectsIn(pull.north)).toEqual(pushed);
    // The report goes to the agent's own branch; the status branch is the controller's alone.
    const statusTip = gitIn(pull.dir, "rev-parse", "gitfleet/status");
    const files = branchFiles(pull.dir, "gitfleet/status-agents/north");
    expect([...files.keys()].sort()).toEqual(["status/agents/north.yaml", "status/inventory/north.yaml"]);
    expect(asMap(readEmittedYaml(files.get("status/agents/north.yaml") ?? ""))).toMatchObject({
      cluster: "north",
      agent: "gitfleet-agent@north",
      observed: { reachable: true },
    });
    expect(asMap(readEmittedYaml(files.get("status/inventory/north.yaml") ?? "")).entries).toContainEqual(
      expect.objectContaining({ kind: "Deployment", namespace: "shop", name: "cart" }),
    );
    expect(gitIn(pull.dir, "log", "-1", "--format=%s%n%b", "gitfleet/status-agents/north")).toMatch(
      /^agent north: north \w+[\s\S]*Gitfleet-Agent: gitfleet-agent@north/,
    );
    expect(gitIn(pull.dir, "rev-parse", "gitfleet/status")).toBe(statusTip);
    // Pods get ready: the agent reports until north is Healthy, then has nothing new to say.
    for (let i = 0; i < 100; i++) {
      const round = await pull.agent.round();
      if (round.result?.objects.every((o) => o.health.status === "Healthy") && round.report === "unchanged")
        break;
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
    const tip = gitIn(pull.dir, "rev-parse", "gitfleet/status-agents/north");
    expect((await pull.agent.round()).report).toBe("unchanged");
    expect(gitIn(pull.dir, "rev-parse", "gitfleet/status-agents/north")).toBe(tip);
    // The controller folds the agent's report into status/apps/ and status/clusters/.
    await pull.round();
    const cart = asMap(
      asMap(readEmittedYaml(branchFiles(pull.dir, "gitfleet/status").get(appStatusPath("cart")) ?? ""))
        .observed,
    );
    expect(asMap(cart.north).syncedCommit).toMatch(/^[0-9a-f]{40}$/);
    expect(asMap(cart.west).syncedCommit).toMatch(/^[0-9a-f]{40}$/);
    const northStatus = asMap(
      readEmittedYaml(branchFiles(pull.dir, "gitfleet/status").get("status/clusters/north.yaml") ?? ""),
    );
    expect(asMap(northStatus.observed).reachable).toBe(true);

    // A change reaches north through the agent too: cart leaves north, and is pruned there.
    const withoutCartOnNorth: FleetSpec = {
      ...BASE_SPEC,
      apps: BASE_SPEC.apps.map((a) => (a.name === "cart" ? { ...a, clusters: ["west"] } : a)),
    };
    const files2 = fleetWithNorthIn("pull", withoutCartOnNorth);
    files2.set(
      "fleet.yaml",
      new TextEncoder().encode(
        "apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata:\n  name: t\nspec:\n  pruning:\n    maxDeletionPercent: 100\n",
      ),
    );
    commitTree(pull.dir, files2, "cart only in west");
    await pull.round();
    const next = await pull.agent.round();
    expect(next.result?.pruned.map((p) => [p.identity, p.outcome])).toEqual(
      expect.arrayContaining([["apps/Deployment/shop/cart", "deleted"]]),
    );
    expect(Object.keys(await objectsIn(pull.north)).some((k) => k.includes("/cart"))).toBe(false);
  });

  it("holds what a drain by commit moves off its cluster to the deletion budget, and prunes it once allowed", async () => {
    const pull = await setUp("pull");
    await pull.round();
    await pull.agent.round();
    expect(Object.keys(await objectsIn(pull.north)).some((k) => k.includes("/cart"))).toBe(true);
    // Drain north by commit: cart and jobs leave it, which is far over the 30% deletion budget. A
    // drain is a person's change: it goes through the budget like any other deletion.
    const files = fleetWithNorthIn("pull");
    const north = new TextDecoder().decode(files.get("clusters/north.yaml"));
    files.set("clusters/north.yaml", new TextEncoder().encode(`${north}  drain: true\n`));
    commitTree(pull.dir, files, "drain north");
    let token: string | undefined;
    for (let i = 0; i < 100 && !token; i++) {
      await pull.round();
      const round = await pull.agent.round();
      expect(round.result?.pruned.filter((p) => p.outcome === "deleted")).toEqual([]);
      token = round.result?.pruneBlocked?.token;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(token).toMatch(/^prune-[0-9a-f]{12}$/);
    expect(Object.keys(await objectsIn(pull.north)).some((k) => k.includes("/cart"))).toBe(true);
    // The reviewed token in fleet.yaml lets exactly that deletion through.
    files.set(
      "fleet.yaml",
      new TextEncoder().encode(
        `apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata:\n  name: f\nspec:\n  pruning:\n    allowPrune: ${token}\n`,
      ),
    );
    commitTree(pull.dir, files, "allow the drain's deletions");
    let pruned: string[] = [];
    for (let i = 0; i < 100 && !pruned.includes("apps/Deployment/shop/cart"); i++) {
      await pull.round();
      const round = await pull.agent.round();
      pruned = [
        ...pruned,
        ...(round.result?.pruned ?? []).filter((p) => p.outcome === "deleted").map((p) => p.identity),
      ];
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(pruned).toEqual(
      expect.arrayContaining(["apps/Deployment/shop/cart", "apps/Deployment/batch/jobs"]),
    );
    expect(
      Object.keys(await objectsIn(pull.north)).some((k) => k.includes("/cart") || k.includes("/jobs")),
    ).toBe(false);
  });

  it("applies migration gates: leaves an unapproved app alone, adopts it once approved, detaches it on rollback", async () => {
    const pull = await setUp("pull");
    const migration = (flags: string) =>
      `apiVersion: gitfleet.io/v1alpha1\nkind: Migration\nmetadata:\n  name: move\nspec:\n  observe: 0s\n  batches:\n    - name: north\n      apps: [jobs]\n      clusters: [north]\n${flags}`;
    const files = fleetWithNorthIn("pull");
    files.set("migrations/move.yaml", new TextEncoder().encode(migration("")));
    commitTree(pull.dir, files, "migrate jobs in north");
    // jobs' ConfigMap already runs in north, made by hand.
    const configMaps = `${pull.north.url}/api/v1/namespaces/batch/configmaps`;
    await fetch(`${pull.north.url}/api/v1/namespaces`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: "batch" } }),
    });
    const created = asMap(
      await (
        await fetch(configMaps, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name: "jobs", namespace: "batch" },
            data: { LEVEL: "info" },
          }),
        })
      ).json(),
    );
    const live = async () => asMap(await (await fetch(`${configMaps}/jobs`)).json());
    const labels = async () => asMap(asMap((await live()).metadata).labels);
    const deployment = async () =>
      (await fetch(`${pull.north.url}/apis/apps/v1/namespaces/batch/deployments/jobs`)).status;

    await pull.round();
    expect([...branchFiles(pull.dir, "gitfleet/status").keys()]).toContain(
      "rendered/north/batch/apps.Deployment.jobs.yaml",
    );
    await pull.agent.round();
    // Not approved: the agent neither adopts nor creates.
    expect(await labels()).toEqual({});
    expect(await deployment()).toBe(404);

    files.set("migrations/move.yaml", new TextEncoder().encode(migration("      approved: true\n")));
    commitTree(pull.dir, files, "approve north");
    const state = () =>
      String(
        asMap(
          asList(
            asMap(
              readEmittedYaml(
                branchFiles(pull.dir, "gitfleet/status").get("status/migrations/move.yaml") ?? "",
              ),
            ).batches,
          )[0],
        ).state,
      );
    for (let i = 0; i < 40 && state() !== "Succeeded"; i++) {
      await pull.round();
      await pull.agent.round();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(state()).toBe("Succeeded");
    expect(await labels()).toMatchObject({ "gitfleet.io/app": "jobs" });
    expect(asMap((await live()).metadata).uid).toBe(asMap(created.metadata).uid);
    expect(await deployment()).toBe(200);

    files.set(
      "migrations/move.yaml",
      new TextEncoder().encode(migration("      approved: true\n      rollback: true\n")),
    );
    commitTree(pull.dir, files, "roll north back");
    await pull.round();
    expect(state()).toBe("RolledBack");
    await pull.agent.round();
    expect(await labels()).toEqual({});
    expect(asMap((await live()).metadata).uid).toBe(asMap(created.metadata).uid);
    expect(await deployment()).toBe(200);
    // And it stays so on later rounds.
    await pull.agent.round();
    expect(await labels()).toEqual({});
  });
});
