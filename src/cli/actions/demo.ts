import { randomBytes } from "node:crypto";
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { asList, asMap } from "../../apimachinery/json.js";
import { loadFleetWithBuilds } from "../../builds/load-with-builds.js";
import { buildController } from "../../controller/build-controller.js";
import type { ControllerReport } from "../../controller/controller.js";
import type { Reconciler } from "../../controller/reconciler.js";
import { FleetRepo } from "../../git/fleet-repo.js";
import { StatusReader } from "../../git/status-reader.js";
import { createLogger } from "../../log/logger.js";
import { renderFleet } from "../../render/render-fleet.js";
import type { ControllerServer } from "../../server/http-server.js";
import { simulatedKubeconfig } from "../../sim/kubeconfig.js";
import { type SimulatedMember, startMember } from "../../sim/member-server.js";
import { parseSimulationProfile } from "../../sim/simulation-profile.js";
import { readDirectoryTree } from "../../source/read-directory.js";
import { demoSigningKey, startAgents } from "../demo/demo-agents.js";
import { startDemoDns } from "../demo/demo-dns.js";
import { prepareDemoHelm } from "../demo/demo-helm.js";
import { hostedClusterPreview } from "../demo/demo-hosted.js";
import { serveDemoQueue } from "../demo/demo-queue.js";
import { commitAll, deployByHand } from "../demo/deploy-by-hand.js";
import { installMcsCrds } from "../demo/mcs-crds.js";
import { ProgressPrinter } from "../demo/progress-printer.js";
import { DEMO_LOAD_APP, startDemoLoad, stopDemoLoad } from "../demo-load.js";
import { ExitCode, type ExitCodeValue } from "../exit-codes.js";
import type { CommandOutput } from "../output.js";
import { progressFor, reconcileProgress, syncProgress } from "../progress.js";
import { ControllerEndpoints, type ServedParts } from "../serve-controller.js";

const EXAMPLE_REPO = fileURLToPath(new URL("../../../../example-repo", import.meta.url));

const EXAMPLE_PROFILE = fileURLToPath(new URL("../../../../example-simulation.yaml", import.meta.url));

export async function runDemo(
  output: CommandOutput,
  intervalMs: number,
  listen: string,
): Promise<ExitCodeValue> {
  const dir = mkdtempSync(join(tmpdir(), "gitfleet-demo-"));
  const repoDir = join(dir, "fleet");
  cpSync(EXAMPLE_REPO, repoDir, { recursive: true });
  prepareDemoHelm(repoDir, output);
  await commitAll(repoDir);
  const model = (await loadFleetWithBuilds(await readDirectoryTree(repoDir))).model;
  if (!model) throw new Error("the example fleet does not validate");
  output.out(
    `gitfleet demo: the example fleet is a Git repository in ${repoDir}\n  edit it and commit: the next reconcile writes the change to its gitfleet/status branch\n\n`,
  );
  const hosted = await hostedClusterPreview();
  if (hosted) output.out(`${hosted}\n`);
  const profile = parseSimulationProfile(readFileSync(EXAMPLE_PROFILE, "utf8"), EXAMPLE_PROFILE);
  const members: SimulatedMember[] = [];
  // Start-up progress: bars on a terminal, log records on stderr otherwise.
  const progressLogger = createLogger({ level: "info" });
  const memberProgress = progressFor({ stream: process.stderr, logger: progressLogger });
  const starting = memberProgress.task("start members", model.clusters.length);
  for (const cluster of model.clusters) {
    const name = cluster.metadata.name;
    starting.update(members.length, name);
    members.push(
      await startMember({
        name,
        // Sized for the example's apps; pods take a moment to get ready, so the convergence shows.
        world: {
          nodePools: profile.poolsFor(name),
          workloads: profile.workloads,
          readyDelayMs: profile.readyDelayMs,
          ...(profile.hpaPeriodMs ? { hpaPeriodMs: profile.hpaPeriodMs } : {}),
        },
      }),
    );
  }
  starting.finish(`${members.length} members`);
  memberProgress.stop();
  const kubeconfig = join(dir, "kubeconfig");
  writeFileSync(kubeconfig, simulatedKubeconfig(members), { mode: 0o600 });
  // What the example renders before any member was read: what a team deployed by hand, and the CRDs.
  const rendered = renderFleet(model).objects;
  await installMcsCrds(model, rendered, members);
  const byHand = await deployByHand(model, rendered, members);
  output.out("simulated members (the Kubernetes API on 127.0.0.1):\n");
  for (const member of members) {
    const cluster = model.clusters.find((c) => c.metadata.name === member.name);
    output.out(
      `  ${member.name.padEnd(12)} ${(cluster?.spec.provider ?? "").padEnd(5)} ${(cluster?.spec.region ?? "").padEnd(10)} ${member.url.padEnd(24)} ${capacity(member)}\n`,
    );
  }
  if (byHand.count > 0)
    output.out(
      `\n${byHand.apps.join(" and ")} already run in ${byHand.clusters} members, created by hand (${byHand.count} objects):\nthe Migration in migrations/ brings them under gitfleet batch by batch; gitfleet leaves them alone until a batch is approved.\n`,
    );
  const logger = createLogger({ level: "silent" });
  // The first reconcile and sync as bars; what the rounds print waits until they are gone.
  const progress = progressFor({ stream: process.stderr, logger: progressLogger });
  const repo = await FleetRepo.open({ location: repoDir });
  const endpoints = new ControllerEndpoints(repo);
  // The demo signs its status commits with a key of its own, as a fleet should: the pull-mode agent
  // applies only what that key signed, and a restarted controller takes its own commits as they are.
  const signing = await demoSigningKey(dir);
  const secretDigestKey = new Uint8Array(randomBytes(32));
  // What the rounds print waits until the start-up bars are gone.
  let startedUp: () => void = () => {};
  let printed = new Promise<void>((resolve) => {
    startedUp = resolve;
  });
  const statusReader = new StatusReader(repo, { source: "main", status: "gitfleet/status" });
  const printer = new ProgressPrinter(output, repoDir, statusReader, (subject) => {
    // One autoscale commit may carry several workloads' totals: the load stops at storefront-api's.
    if (subject.startsWith("autoscale: ") && subject.includes(` ${DEMO_LOAD_APP}: hpa`))
      stopDemoLoad(members);
  });
  const built = buildController({
    logger,
    reconciler: {
      ...(signing ? { sign: signing.sign, verify: signing.verify } : {}),
      repo,
      onProgress: reconcileProgress(progress),
      branch: "main",
      statusBranch: "gitfleet/status",
      author: { name: "gitfleet demo", email: "gitfleet@localhost" },
      controllerId: "gitfleet-demo",
      // The demo's Secrets hold fake values; a key of its own keeps their digests unguessable all the same.
      secretDigestKey,
    },
    sync: {
      // Clusters that name their kubeconfig by an environment variable get the demo's one.
      connections: {
        kubeconfig,
        env: Object.fromEntries(
          model.clusters.flatMap((c) =>
            c.spec.connection?.kubeconfigEnv ? [[c.spec.connection.kubeconfigEnv, kubeconfig]] : [],
          ),
        ),
      },
      statusIntervalMs: 1000,
      resyncIntervalMs: intervalMs * 6,
      // The demo samples pods more often than fleet.yaml's default (15s), so a scale-up shows soon.
      autoscaleIntervalMs: 5_000,
      onSyncProgress: syncProgress(progress),
    },
    intervalMs,
    hooks: {
      ...endpoints.hooks,
      onReconcile: (result) => {
        const { report, error } = result;
        if (error)
          output.out(`reconcile failed: ${error instanceof Error ? error.message : String(error)}\n`);
        // The controller's rounds give ControllerReports.
        if (report) printed = printed.then(() => printer.print(report as ControllerReport));
        endpoints.hooks.onReconcile?.(result);
      },
    },
  });
  const { reconciler, loop } = built;
  const server = await serveDemo(listen, endpoints, built, secretDigestKey);
  built.start();
  // Pull-mode clusters run their agent, as they would inside the member.
  const agents = await startAgents(
    model,
    members,
    repoDir,
    { logger, intervalMs, verify: signing?.verify },
    () => loop.trigger("agent"),
  );
  await loop.idle();
  await built.syncer?.idle();
  progress.stop();
  startedUp();
  await printed;
  const dns = await startDemoDns(model, members, reconciler.snapshot().state.render.decisions);
  output.out(
    `\ndashboard: ${server.url}/  (the JSON API under ${server.url}/api/, Prometheus metrics at ${server.url}/metrics)\n`,
  );
  output.out(
    `\nkubeconfig: ${kubeconfig}\n  try: kubectl --kubeconfig ${kubeconfig} --context ${members[0]?.name ?? ""} get pods -A\nstatus branch: git -C ${repoDir} log --stat gitfleet/status\n${failoverHint(reconciler, members)}${dns ? `\n${dns.hint}` : ""}\nMembers converge below as pods become ready.\n`,
  );
  output.out(
    `${startDemoLoad(model, members) ?? ""}${serveDemoQueue(model, members) ?? ""}Ctrl-C to stop.\n`,
  );
  await new Promise<void>((resolve) => {
    process.once("SIGTERM", resolve);
    process.once("SIGINT", resolve);
  });
  await server.close();
  await dns?.close();
  await agents.stop();
  await built.stop();
  await printed;
  await Promise.all(members.map((member) => member.close()));
  return ExitCode.Ok;
}

// The dashboard on the port asked for, or on a free one when that is taken (another demo, another service).
async function serveDemo(
  listen: string,
  endpoints: ControllerEndpoints,
  parts: ServedParts,
  secretDigestKey: Uint8Array,
): Promise<ControllerServer> {
  const options = {
    webhookSecret: undefined,
    branch: "main",
    statusBranch: "gitfleet/status",
    logger: createLogger({ level: "silent" }),
    // The demo's repository is the user's own, on this machine: any of its branches may be planned.
    planRevisions: ["**"],
    secretDigestKey,
  };
  try {
    return await endpoints.serve({ ...options, listen }, parts);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
    return endpoints.serve({ ...options, listen: listen.replace(/:\d+$/, ":0") }, parts);
  }
}

// How to watch a failover: take down a member that runs web's replicas, for long enough.
function failoverHint(reconciler: Reconciler, members: readonly SimulatedMember[]): string {
  const { render, model } = reconciler.snapshot().state;
  const web = render.decisions.find((d) => d.app === "web");
  const api = render.decisions.find((d) => d.app === "storefront-api");
  const region = (name: string) => model?.clusters.find((c) => c.metadata.name === name)?.spec.region;
  const runsWeb = (name: string) =>
    (web?.decision.clusters[name] ?? 0) > 0 && (api?.decision.clusters[name] ?? 0) > 0;
  // One whose region keeps another of web's clusters, so that web's spread constraint still holds.
  const target =
    members.find(
      (m) =>
        runsWeb(m.name) &&
        members.some((o) => o !== m && runsWeb(o.name) && region(o.name) === region(m.name)),
    ) ?? members[0];
  return `failover: take ${target?.name ?? "a member"} down for 3 minutes:
  curl -X POST ${target?.url ?? ""}/_gitfleet/faults -d '{"downForSeconds":180}'
  it is NotReady after 3 failed probes (2s apart) and tainted NoExecute 30s later (example-repo/fleet.yaml
  clusterHealth); storefront-api and web tolerate that for 30s (their Placements' failover), then their
  replicas move — the failover commit is printed below. web's count in each member is its HPA's; the
  old replicas go once the new ones are ready. When the member returns, nothing moves back.${pullHint(members)}
`;
}

// A pull-mode member cannot be probed: its agent's heartbeats stop when it goes down.
function pullHint(members: readonly SimulatedMember[]): string {
  const pull = members.find((m) => m.name === "idc-east-2");
  if (!pull) return "";
  return `
pull mode: ${pull.name}'s agent beats every 30s while its member answers; take the member down
  curl -X POST ${pull.url}/_gitfleet/faults -d '{"downForSeconds":300}'
  and after 60s without a heartbeat and 3 more probes it is NotReady on the status branch.`;
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
