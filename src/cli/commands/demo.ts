import fs, { cpSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { Command } from "commander";
import git from "isomorphic-git";
import { ReconcileLoop } from "../../controller/loop.js";
import { Reconciler } from "../../controller/reconciler.js";
import { FleetRepo } from "../../git/fleet-repo.js";
import { readTreeFiles } from "../../git/read-tree.js";
import { createLogger } from "../../log/logger.js";
import { simulatedKubeconfig } from "../../member/kubeconfig.js";
import { type SimulatedMember, startMember } from "../../member/member-server.js";
import { DEFAULT_PROFILE } from "../../member/simulation-profile.js";
import { asList, asMap } from "../../model/json.js";
import { loadFleet } from "../../model/load-fleet.js";
import { readEmittedYaml } from "../../render/yaml-reader.js";
import { readDirectoryTree } from "../../source/read-directory.js";
import { ExitCode, type ExitCodeValue } from "../exit-codes.js";
import type { CommandOutput } from "../output.js";

const EXAMPLE_REPO = fileURLToPath(new URL("../../../../example-repo", import.meta.url));

/** `gitfleet demo`: the example fleet in a Git repository, simulated members, and the controller. */
export function registerDemo(
  program: Command,
  output: CommandOutput,
  setExit: (code: ExitCodeValue) => void,
): void {
  program.addCommand(
    new Command("demo")
      .description(
        "run gitfleet end to end on this machine: the example fleet in a temporary Git repository, a simulated member per cluster, and the reconcile loop writing the status branch",
      )
      .option("--interval <seconds>", "how often the demo repository is reconciled", "5")
      .action(async (options: { interval: string }) => {
        setExit(await runDemo(output, Number(options.interval) * 1000));
      }),
  );
}

async function runDemo(output: CommandOutput, intervalMs: number): Promise<ExitCodeValue> {
  const dir = mkdtempSync(join(tmpdir(), "gitfleet-demo-"));
  const repoDir = join(dir, "fleet");
  cpSync(EXAMPLE_REPO, repoDir, { recursive: true });
  await commitAll(repoDir);
  const model = loadFleet(await readDirectoryTree(repoDir)).model;
  if (!model) throw new Error("the example fleet does not validate");
  output.out(
    `gitfleet demo: the example fleet is a Git repository in ${repoDir}\n  edit it and commit: the next reconcile writes the change to its gitfleet/status branch\n\n`,
  );
  const members: SimulatedMember[] = [];
  for (const cluster of model.clusters) {
    const name = cluster.metadata.name;
    members.push(
      await startMember({
        name,
        world: { nodePools: DEFAULT_PROFILE.poolsFor(name), workloads: DEFAULT_PROFILE.workloads },
      }),
    );
  }
  const kubeconfig = join(dir, "kubeconfig");
  writeFileSync(kubeconfig, simulatedKubeconfig(members), { mode: 0o600 });
  output.out("simulated members (the Kubernetes API on 127.0.0.1):\n");
  for (const member of members) {
    const cluster = model.clusters.find((c) => c.metadata.name === member.name);
    output.out(
      `  ${member.name.padEnd(12)} ${(cluster?.spec.provider ?? "").padEnd(5)} ${(cluster?.spec.region ?? "").padEnd(10)} ${member.url.padEnd(24)} ${capacity(member)}\n`,
    );
  }
  const logger = createLogger({ level: "warn" });
  const reconciler = new Reconciler({
    repo: await FleetRepo.open({ location: repoDir }),
    branch: "main",
    statusBranch: "gitfleet/status",
    author: { name: "gitfleet demo", email: "gitfleet@localhost" },
    controllerId: "gitfleet-demo",
    logger,
  });
  let printed = Promise.resolve();
  const loop = new ReconcileLoop(reconciler, {
    intervalMs,
    logger,
    onReconcile: ({ report, error }) => {
      if (error) output.out(`reconcile failed: ${error instanceof Error ? error.message : String(error)}\n`);
      else if (report && report.result !== "up-to-date")
        printed = printed.then(async () => {
          const validity = report.valid
            ? "valid"
            : `invalid: ${report.errors} errors, see status/source.yaml`;
          output.out(
            `\nreconciled ${report.sourceCommit.slice(0, 7)} → gitfleet/status ${report.statusCommit?.slice(0, 7)} (${validity})\n`,
          );
          if (report.valid) output.out(await desiredReplicas(repoDir));
        });
    },
  });
  loop.start();
  await loop.idle();
  await printed;
  output.out(
    `\nkubeconfig: ${kubeconfig}\n  try: kubectl --kubeconfig ${kubeconfig} --context ${members[0]?.name ?? ""} get nodes\nstatus branch: git -C ${repoDir} log --stat gitfleet/status\n\nThe members run nodes but no apps yet: applying the rendered tree to them comes with sync.\nCtrl-C to stop.\n`,
  );
  await new Promise<void>((resolve) => {
    process.once("SIGTERM", resolve);
    process.once("SIGINT", resolve);
  });
  await loop.stop();
  await Promise.all(members.map((member) => member.close()));
  return ExitCode.Ok;
}

async function commitAll(dir: string): Promise<void> {
  await git.init({ fs, dir, defaultBranch: "main" });
  const files = [...(await readDirectoryTree(dir)).keys()];
  for (const filepath of files) await git.add({ fs, dir, filepath: relative(dir, join(dir, filepath)) });
  await git.commit({
    fs,
    dir,
    message: "The example fleet",
    author: { name: "gitfleet demo", email: "gitfleet@localhost" },
  });
}

function capacity(member: SimulatedMember): string {
  const nodes = asList(
    asMap(
      member.api.handle({
        method: "GET",
        path: "/api/v1/nodes",
        query: new URLSearchParams(),
        contentType: "",
        body: undefined,
      }).body,
    ).items,
  );
  const cpu = nodes.reduce(
    (sum: number, node) => sum + Number(asMap(asMap(asMap(node).status).allocatable).cpu ?? 0),
    0,
  );
  return `${nodes.length} nodes, ${cpu} CPUs`;
}

// Each workload's desired replicas per cluster, as the status branch records them in status/apps/.
async function desiredReplicas(repoDir: string): Promise<string> {
  const gitdir = join(repoDir, ".git");
  const cache = {};
  const tip = await git.resolveRef({ fs, gitdir, ref: "refs/heads/gitfleet/status" });
  const tree = (await git.readCommit({ fs, gitdir, cache, oid: tip })).commit.tree;
  const files = await readTreeFiles(
    gitdir,
    cache,
    tree,
    (path) => path === "status/" || path.startsWith("status/apps"),
  );
  const lines = ["desired replicas (status/apps/ on the status branch):"];
  for (const [path, bytes] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const app = asMap(readEmittedYaml(new TextDecoder().decode(bytes)) ?? {});
    for (const workload of asList(app.workloads).map((w) => asMap(w))) {
      const clusters = Object.entries(asMap(asMap(workload.decision).clusters))
        .map(([cluster, replicas]) => `${cluster}=${String(replicas)}`)
        .join(" ");
      lines.push(
        `  ${String(app.app ?? path).padEnd(16)} ${String(workload.resource).padEnd(36)} ${clusters || "nowhere"}`,
      );
    }
  }
  return `${lines.join("\n")}\n`;
}
