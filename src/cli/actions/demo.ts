import { randomBytes } from "node:crypto";
import fs, { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import git from "isomorphic-git";
import type { Logger } from "pino";
import { Agent } from "../../agent/agent.js";
import { buildController } from "../../controller/build-controller.js";
import type { ControllerReport } from "../../controller/controller.js";
import type { Reconciler } from "../../controller/reconciler.js";
import { commitSigner } from "../../git/commit-signer.js";
import { type CommitVerifier, commitVerifier } from "../../git/commit-verifier.js";
import { FleetRepo } from "../../git/fleet-repo.js";
import { StatusReader } from "../../git/status-reader.js";
import { MemberClient } from "../../kube/member-client.js";
import { createLogger } from "../../log/logger.js";
import { asList, asMap, type JsonMap } from "../../model/json.js";
import { loadFleet } from "../../model/load-fleet.js";
import { eventTrailer } from "../../model/trailers.js";
import type { FleetModel } from "../../model/types.js";
import type { FleetView } from "../../observe/fleet-view.js";
import { renderFleet } from "../../render/render-fleet.js";
import { APP_LABEL, MANAGED_BY, PLACEMENT_ANNOTATION } from "../../render/tracking.js";
import type { ControllerServer } from "../../server/http-server.js";
import { memberClientConfig, simulatedKubeconfig } from "../../sim/kubeconfig.js";
import { type SimulatedMember, startMember } from "../../sim/member-server.js";
import { parseSimulationProfile } from "../../sim/simulation-profile.js";
import { readDirectoryTree } from "../../source/read-directory.js";
import { runProgram } from "../../util/run-program.js";
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
  await commitAll(repoDir);
  const model = loadFleet(await readDirectoryTree(repoDir)).model;
  if (!model) throw new Error("the example fleet does not validate");
  output.out(
    `gitfleet demo: the example fleet is a Git repository in ${repoDir}\n  edit it and commit: the next reconcile writes the change to its gitfleet/status branch\n\n`,
  );
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
  const byHand = await deployByHand(model, members);
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
    if (subject.startsWith(`autoscale: ${DEMO_LOAD_APP}: hpa`)) stopDemoLoad(members);
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
  output.out(
    `\ndashboard: ${server.url}/  (the JSON API under ${server.url}/api/, Prometheus metrics at ${server.url}/metrics)\n`,
  );
  output.out(
    `\nkubeconfig: ${kubeconfig}\n  try: kubectl --kubeconfig ${kubeconfig} --context ${members[0]?.name ?? ""} get pods -A\nstatus branch: git -C ${repoDir} log --stat gitfleet/status\n${failoverHint(reconciler, members)}\nMembers converge below as pods become ready.\n`,
  );
  output.out(`${startDemoLoad(model, members) ?? ""}Ctrl-C to stop.\n`);
  await new Promise<void>((resolve) => {
    process.once("SIGTERM", resolve);
    process.once("SIGINT", resolve);
  });
  await server.close();
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
  old replicas go once the new ones are ready. When the member returns, nothing moves back.
`;
}

/**
 * The apps the example's Migration brings under gitfleet run already, as a team deployed them by
 * hand: their rendered objects without gitfleet's labels, applied by another field manager.
 */
async function deployByHand(
  model: FleetModel,
  members: readonly SimulatedMember[],
): Promise<{ apps: string[]; clusters: number; count: number }> {
  const apps = [...new Set(model.migrations.flatMap((m) => m.spec.batches.flatMap((b) => b.apps)))].sort();
  const objects = renderFleet(model).objects.filter((o) => apps.includes(o.app));
  const clusters = new Set<string>();
  for (const member of members) {
    const client = new MemberClient(member.name, memberClientConfig(member), { fieldManager: "kubectl" });
    for (const object of objects.filter((o) => o.cluster === member.name)) {
      const namespace = asMap(object.object.metadata).namespace;
      if (typeof namespace === "string")
        await client.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }, false);
      await client.apply(withoutTracking(object.object), false);
      clusters.add(member.name);
    }
  }
  return { apps, clusters: clusters.size, count: objects.length };
}

function withoutTracking(object: JsonMap): JsonMap {
  const metadata = asMap(object.metadata);
  const labels = { ...asMap(metadata.labels) };
  delete labels[MANAGED_BY.key];
  delete labels[APP_LABEL];
  const annotations = { ...asMap(metadata.annotations) };
  delete annotations[PLACEMENT_ANNOTATION];
  return { ...object, metadata: { ...metadata, labels, annotations } };
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

// Each workload's desired replicas per cluster, as the status branch records them (the dashboard's view).
function desiredReplicas(view: FleetView): string {
  const lines = ["desired replicas (status/apps/ on the status branch):"];
  for (const app of view.apps)
    for (const workload of app.workloads) {
      const clusters = Object.entries(workload.clusters)
        .filter(([, cell]) => cell.desired > 0)
        .map(([cluster, cell]) => `${cluster}=${cell.desired}`)
        .join(" ");
      lines.push(`  ${app.name.padEnd(16)} ${workload.resource.padEnd(36)} ${clusters || "nowhere"}`);
    }
  return `${lines.join("\n")}\n`;
}

// Per app and cluster, ready/desired replicas as the members report them and health; then the
// clusters the probes found NotReady.
function observedProgress(view: FleetView): { healthy: boolean; text: string } {
  let placements = 0;
  let ready = 0;
  const lines: string[] = [];
  for (const app of view.apps) {
    const clusters = Object.entries(app.clusters)
      .filter(
        // A cluster the members reported on (an app placed there but not synced yet says so, with a reason).
        ([, seen]) =>
          seen.health !== "Unknown" || seen.reason !== undefined || seen.syncedCommit !== undefined,
      )
      .map(([cluster, seen]) => {
        placements++;
        // Healthy on the rendering the cluster should run: a cluster the rollout has not reached yet is not done.
        if (seen.health === "Healthy" && seen.held !== "rollout") ready++;
        const replicas = app.workloads
          .flatMap((w) => {
            const cell = w.clusters[cluster];
            return cell?.ready !== undefined ? [`${cell.ready}/${cell.reported ?? cell.desired}`] : [];
          })
          .join("+");
        const waiting =
          seen.held === "rollout"
            ? " (rollout waiting)"
            : seen.held === "migration"
              ? " (not adopted: migration waits)"
              : "";
        return `${cluster}=${replicas ? `${replicas} ` : ""}${seen.health}${waiting}`;
      });
    if (clusters.length > 0) lines.push(`  ${app.name.padEnd(16)} ${clusters.join("  ")}`);
  }
  const healthy = ready === placements;
  const header = healthy
    ? `members converged: every app Healthy in every cluster (${placements} app placements)`
    : `members converging: ${ready} of ${placements} app placements Healthy (ready/desired replicas)`;
  const notReady = view.clusters.flatMap((c) =>
    c.condition && !c.condition.ready
      ? [
          `  cluster ${c.name} NotReady (${c.condition.reason ?? "?"} since ${c.condition.since ?? "?"}): ${c.condition.taints.join(", ")}`,
        ]
      : [],
  );
  return {
    healthy: healthy && notReady.length === 0,
    text: `\n${header}\n${[...lines, ...notReady.sort()].join("\n")}\n`,
  };
}

/** Prints what each round did: a new render's desired replicas, then the members converging, until Healthy. */
class ProgressPrinter {
  private converged = false;

  constructor(
    private readonly output: CommandOutput,
    private readonly repoDir: string,
    /** The status branch as the dashboard reads it. */
    private readonly status: StatusReader,
    /** Told the subject of every status commit printed. */
    private readonly onCommit: (subject: string) => void = () => {},
  ) {}

  async print(report: ControllerReport): Promise<void> {
    if (report.result === "committed") {
      const validity = report.valid ? "valid" : `invalid: ${report.errors} errors, see status/source.yaml`;
      const message = report.statusCommit
        ? (await git.readCommit({ fs, dir: this.repoDir, oid: report.statusCommit })).commit.message
        : "";
      // A failover or autoscale commit tells what moved and why; a reconcile names the source commit.
      const subject = message.split("\n\n")[0] ?? "";
      const event = eventTrailer(message);
      this.onCommit(subject);
      this.output.out(
        event === "failover" || event === "scale"
          ? `\n${subject} (gitfleet/status ${report.statusCommit?.slice(0, 7)})\n`
          : `\nreconciled ${report.sourceCommit.slice(0, 7)} → gitfleet/status ${report.statusCommit?.slice(0, 7)} (${validity})\n`,
      );
      if (report.valid) this.output.out(desiredReplicas(await this.status.view()));
      this.converged = false;
    }
    if (report.observed !== "committed") return;
    const progress = observedProgress(await this.status.view());
    if (!this.converged || !progress.healthy) this.output.out(progress.text);
    this.converged = progress.healthy;
  }
}

// An agent per pull-mode cluster, each round on the interval; a committed report asks the controller to fold it in.
async function startAgents(
  model: FleetModel,
  members: readonly SimulatedMember[],
  repoDir: string,
  options: { logger: Logger; intervalMs: number; verify: CommitVerifier | undefined },
  reported: () => void,
): Promise<{ stop: () => Promise<void> }> {
  const { logger, intervalMs, verify } = options;
  const agents: Agent[] = [];
  // Without a signing key (no ssh-keygen here) there is nothing an agent may trust: none runs.
  const pull = verify ? model.clusters.filter((c) => c.spec.connection?.mode === "pull") : [];
  for (const cluster of pull) {
    const member = members.find((m) => m.name === cluster.metadata.name);
    if (!member) continue;
    agents.push(
      new Agent({
        repo: await FleetRepo.open({ location: repoDir }),
        cluster: member.name,
        branch: "main",
        statusBranch: "gitfleet/status",
        client: new MemberClient(member.name, memberClientConfig(member)),
        logger,
        author: { name: "gitfleet agent", email: `gitfleet-agent@${member.name}` },
        push: true,
        verify: verify as CommitVerifier,
      }),
    );
  }
  let running: Promise<void> = Promise.resolve();
  const tick = () => {
    running = running.then(async () => {
      for (const agent of agents) {
        const round = await agent.round().catch(() => undefined);
        if (round?.report === "committed") reported();
      }
    });
  };
  const timer = setInterval(tick, Math.min(intervalMs, 2000));
  tick();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}

// An SSH key made for this demo (ssh-keygen, in its directory): it signs the status commits, and its
// public half is what the agent and a restarted controller trust. Undefined without ssh-keygen.
async function demoSigningKey(
  dir: string,
): Promise<{ sign: (payload: string) => Promise<string>; verify: CommitVerifier } | undefined> {
  const key = join(dir, "signing-key");
  const made = await runProgram(
    "ssh-keygen",
    ["-q", "-t", "ed25519", "-N", "", "-C", "gitfleet-demo", "-f", key],
    "",
  ).catch(() => undefined);
  if (made?.code !== 0) return undefined;
  const verify = await commitVerifier({ signingKey: { format: "ssh", key } });
  return verify ? { sign: commitSigner("ssh", key), verify } : undefined;
}
