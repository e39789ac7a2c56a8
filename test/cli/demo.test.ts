import { type ChildProcess, spawn } from "node:child_process";
import { Resolver } from "node:dns/promises";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { appStatusPath } from "../../src/status/status-files.js";
import { gitIn } from "../helpers/git-repo.js";
import { kubectl } from "../helpers/member.js";

/** `gitfleet demo` (what `npm start` runs) as a person runs it: output, kubectl, an edit, Ctrl-C. */
const BIN = fileURLToPath(new URL("../../bin/gitfleet.js", import.meta.url));
let child: ChildProcess | undefined;
let printed = "";
afterEach(() => child?.kill("SIGKILL"));

// Resolves once what the demo printed since `from` matches.
function waitFor(pattern: RegExp, from = 0): Promise<RegExpMatchArray> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = printed.slice(from).match(pattern);
      if (match) resolve(match);
      else if (child?.exitCode !== null) reject(new Error(`demo exited with ${child?.exitCode}: ${printed}`));
      else if (Date.now() - started > 150_000)
        reject(new Error(`no ${pattern} in:\n${printed.slice(from).slice(-3000)}`));
      else setTimeout(check, 50);
    };
    check();
  });
}

// Polls until the check holds (a resolver's answer changes when the member's zone does).
async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const started = Date.now();
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() - started > 60_000) throw new Error(`${what}: not so after 60 s\n${printed.slice(-3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("gitfleet demo", () => {
  it("puts the example fleet in a repository, starts members, reconciles, and reconciles an edit", async () => {
    child = spawn(process.execPath, [BIN, "demo", "--interval", "1"], { stdio: ["ignore", "pipe", "pipe"] });
    child.stdout?.on("data", (chunk: Buffer) => {
      printed += chunk.toString();
    });
    const [, repo] = (await waitFor(/Git repository in (\S+)\n/)) as RegExpMatchArray;
    await waitFor(/Ctrl-C to stop/);
    expect(printed).toMatch(/reconciled [0-9a-f]{7} → gitfleet\/status [0-9a-f]{7} \(valid\)/);
    expect(printed).toMatch(/ {2}web +Deployment shop\/web +aws-use1=3 gcp-euw1=3 idc-east-1=6\n/);
    // A hosted cluster's spec and the plan of a version bump, with no control-plane binaries.
    expect(printed).toContain(
      "hosted clusters (docs/examples/hosted-clusters): pc-1's control plane runs in meta-1\n",
    );
    expect(printed).toMatch(
      /plan of controlplanes\/standard\.yaml version v1\.34\.1 → v1\.34\.2:\n {4}control plane of pc-1 on meta-1:\n {6}kube-apiserver: API server restarts \(rolling\)\n/,
    );
    const [, kubeconfig] = (await waitFor(/kubeconfig: (\S+)\n/)) as RegExpMatchArray;
    const nodes = (await kubectl(String(kubeconfig), "--context", "idc-east-1", "get", "nodes", "-o", "name"))
      .stdout;
    expect(nodes.trim().split("\n")).toHaveLength(5);
    // The controller syncs the members; the demo shows them converge.
    await waitFor(/members converged: every app Healthy in every cluster \(\d+ app placements\)\n/);
    // web's replicas in three clusters; its ServiceImport and EndpointSlices in the others too.
    expect(printed).toMatch(
      / {2}web +aws-use1=3\/3 Healthy +gcp-euw1=3\/3 Healthy +idc-east-1=6\/6 Healthy +idc-east-2=Healthy +idc-west-1=Healthy/,
    );
    const pods = (
      await kubectl(
        String(kubeconfig),
        "--context",
        "idc-east-1",
        "get",
        "pods",
        "-n",
        "shop",
        "-l",
        "app.kubernetes.io/name=web",
        "-o",
        "name",
      )
    ).stdout;
    expect(pods.trim().split("\n")).toHaveLength(6);
    // The demo drives load on storefront-api's pods: its FederatedHPA scales the global total up,
    // divided by the Placement's weights, as an autoscale commit on the status branch.
    expect(printed).toMatch(/storefront-api's pods now use 450m CPU each/);
    // (One autoscale commit may carry orders-worker's total too.)
    await waitFor(/\nautoscale: [^\n]*storefront-api: hpa 8 → \d+ \(cpu 90% > 65%\) aws-use1=3→\d+/);
    expect(gitIn(String(repo), "log", "--format=%s", "gitfleet/status")).toMatch(
      /^autoscale: [^\n]*storefront-api: hpa 8 → /m,
    );
    // arena divides by free capacity: its first division, made before any member's nodes were
    // read, is made again once they are — idc-east-1 (40 CPUs) takes more than the clouds (24).
    await waitFor(
      /\nfailover: capacity of [^;\n]*idc-east-1[^;\n]* now known; arena \d+ → [^\n]*idc-east-1 \+\d+/,
    );
    // orders-worker scales on the depth of its queue (an External metric the members' adapters
    // serve): 800 orders at one replica per 50 is 16, filling idc-east-1 first (overflow tiers) and
    // sending what does not fit there to the clouds.
    expect(printed).toMatch(/queue: 800 orders wait in idc-east-1's partition of orders_queue_depth/);
    await waitFor(
      /\nautoscale: [^\n]*orders-worker: hpa \d+ → 16 \(orders_queue_depth [\d.]+\/pod > 50\/pod/,
    );
    const status = gitIn(String(repo), "show", `gitfleet/status:${appStatusPath("orders-worker")}`);
    const tiers = status.slice(status.indexOf("tiers:"));
    expect(tiers).toMatch(
      /name: onprem\n\s+clusters:[\s\S]*?replicas: [1-9]\d*\n[\s\S]*name: cloud\n[\s\S]*?replicas: [1-9]/,
    );
    // A person edits the fleet and commits: the loop picks it up.
    const placement = `${repo}/placements/web.yaml`;
    writeFileSync(placement, readFileSync(placement, "utf8").replace("weight: 4", "weight: 1"));
    gitIn(
      String(repo),
      "-c",
      "user.name=p",
      "-c",
      "user.email=p@example.com",
      "commit",
      "-qam",
      "web: even weights",
    );
    // The minimums of 2 in each cloud first, then the other 8 evenly.
    await waitFor(/ {2}web +Deployment shop\/web +aws-use1=[45] gcp-euw1=[45] idc-east-1=[23]\n/);
    // web has a member-side HPA: the members keep the replicas it owns, gitfleet does not fight it.
    const after = printed.length;
    await waitFor(/members converged/, after);
    expect(printed.slice(after)).toMatch(
      / {2}web +aws-use1=3\/3 Healthy +gcp-euw1=3\/3 Healthy +idc-east-1=6\/6 Healthy /,
    );
    // The demo's DNS server answers web's clusterset name with the entry point of each cluster
    // running it; a member taken down leaves the answer within seconds, before its replicas move.
    const [, dnsPort] = (await waitFor(
      /dig @127\.0\.0\.1 -p (\d+) \+short web\.shop\.svc\.clusterset\.local/,
    )) as RegExpMatchArray;
    const resolver = new Resolver({ timeout: 2000, tries: 1 });
    resolver.setServers([`127.0.0.1:${dnsPort}`]);
    const answer = () => resolver.resolve4("web.shop.svc.clusterset.local").then((a) => a.sort());
    await until("three entry points", async () => (await answer()).length === 3);
    const [aws] = await resolver.resolve4("aws-use1.web.shop.svc.clusterset.local");
    expect(await answer()).toContain(aws);
    const [, awsUrl] = (await waitFor(
      / {2}aws-use1 +aws +us-east +(http:\/\/127\.0\.0\.1:\d+)/,
    )) as RegExpMatchArray;
    const down = printed.length;
    await fetch(`${awsUrl}/_gitfleet/faults`, {
      method: "POST",
      body: JSON.stringify({ downForSeconds: 30 }),
    });
    // The commit that says aws-use1 is NotReady withdraws its endpoints.
    await waitFor(/\nfailover: [^\n]*endpoints web\.shop −aws-use1 /, down);
    await until("aws-use1 withdrawn", async () => !(await answer()).includes(aws as string));
    expect((await answer()).length).toBe(2);
    // The replicas stay until the NoExecute taint and web's toleration have passed.
    expect(printed.slice(down)).not.toMatch(/web 3 → /);
    const exit = new Promise((resolve) => child?.on("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    expect(await exit).toBe(0);
    rmSync(String(repo).replace(/\/fleet$/, ""), { recursive: true, force: true });
  }, 180_000);
});
