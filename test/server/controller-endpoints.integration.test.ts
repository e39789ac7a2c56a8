import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appStatusPath } from "../../src/status/status-files.js";
import { gitIn } from "../helpers/git-repo.js";
import {
  appHealthy,
  dashboardFleet,
  getJson,
  proposeMoreWeb,
  type RunningController,
  runController,
} from "../helpers/running-controller.js";

// `gitfleet run` against simulated members: the JSON API answers from the status branch, /metrics
// has every series docs/observing.md documents with values that agree with what happened.

const BIN = fileURLToPath(new URL("../../bin/gitfleet.js", import.meta.url));
const execFileAsync = promisify(execFile);
let controller: RunningController;

beforeAll(async () => {
  controller = await runController(dashboardFleet(), "gitfleet-endpoints-");
  await appHealthy(controller, "web");
}, 60_000);

afterAll(async () => {
  await controller?.stop();
});

type Series = { name: string; labels: Record<string, string>; value: number };

async function scrape(): Promise<{ text: string; series: Series[] }> {
  const response = await fetch(`${controller.url}/metrics`);
  expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await response.text();
  const series: Series[] = [];
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? "").matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g))
      labels[key as string] = value as string;
    series.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return { text, series };
}

const value = (series: Series[], name: string, labels: Record<string, string> = {}) =>
  series
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);

describe("the JSON API", () => {
  it("lists every cluster with its region, provider, health and capacity", async () => {
    const { status, body } = await getJson<{ statusCommit: string; clusters: Record<string, unknown>[] }>(
      `${controller.url}/api/clusters`,
    );
    expect(status).toBe(200);
    expect(body.statusCommit).toBe(gitIn(controller.repo, "rev-parse", "gitfleet/status"));
    const byName = Object.fromEntries(body.clusters.map((c) => [c.name, c]));
    expect(Object.keys(byName).sort()).toEqual(["east", "lab", "north", "west"]);
    expect(byName.east).toMatchObject({ region: "us-east", provider: "aws", state: "Healthy" });
    expect(byName.west).toMatchObject({ region: "eu-west", provider: "gcp" });
    // The simulated members' default profile: three nodes of 4 CPUs each; web's pods request 100m.
    expect(byName.east?.capacity).toMatchObject({ nodes: 3, readyNodes: 3, cpu: { allocatable: 12 } });
    const requested = (byName.east?.capacity as { cpu: { requested: number } } | undefined)?.cpu.requested;
    expect(requested).toBeGreaterThanOrEqual(0.2);
  });

  it("gives one app with replicas per cluster, the clusters left out and its objects", async () => {
    const { body } = await getJson<Record<string, unknown>>(`${controller.url}/api/apps/web`);
    const [workload] = body.workloads as {
      clusters: Record<string, { desired: number; ready: number }>;
      leftOut: Record<string, string>;
    }[];
    const desired = Object.values(workload?.clusters ?? {}).reduce((sum, c) => sum + c.desired, 0);
    expect(desired).toBe(6);
    for (const cell of Object.values(workload?.clusters ?? {})) expect(cell.ready).toBe(cell.desired);
    expect(workload?.leftOut.lab).toMatch(/untolerated taint \{gpu=true:NoSchedule\}/);
    const objects = body.objects as Record<string, { kind: string; name: string }[]>;
    expect(objects.east?.map((o) => `${o.kind}/${o.name}`).sort()).toEqual([
      "ConfigMap/web-config",
      "Deployment/web",
    ]);
  });

  it("answers 404 for an app, cluster or path that does not exist", async () => {
    for (const path of ["/api/apps/nope", "/api/clusters/nope", "/api/nope", "/api/commits/0000000"])
      expect((await fetch(`${controller.url}${path}`)).status, path).toBe(404);
  });

  it("gives the status branch's history with kinds, and one commit with the files it changed", async () => {
    const { body } = await getJson<{ events: { commit: string; kind: string; subject: string }[] }>(
      `${controller.url}/api/history?limit=500`,
    );
    const log = gitIn(controller.repo, "log", "--format=%H %s", "gitfleet/status").split("\n");
    expect(body.events.map((e) => `${e.commit} ${e.subject}`)).toEqual(log);
    expect(body.events.at(-1)?.kind).toBe("reconcile");
    const first = body.events.at(-1)?.commit as string;
    const { body: commit } = await getJson<{ files: { path: string; change: string }[] }>(
      `${controller.url}/api/commits/${first.slice(0, 10)}`,
    );
    expect(commit.files).toContainEqual({
      path: "rendered/east/shop/apps.Deployment.web.yaml",
      change: "added",
    });
    expect(commit.files).toContainEqual({ path: appStatusPath("web"), change: "added" });
  });

  it("plans between two revisions exactly as gitfleet plan does, and refuses what is not a revision", async () => {
    proposeMoreWeb(controller.repo);
    const { status, body } = await getJson<{ text: string; plan: { changed: boolean } }>(
      `${controller.url}/api/plan?base=main&head=more-web`,
    );
    expect(status).toBe(200);
    expect(body.plan.changed).toBe(true);
    expect(body.text).toMatch(/Deployment shop\/web/);
    // Byte for byte what the CLI prints for the same revisions.
    const cli = await execFileAsync(process.execPath, [
      BIN,
      "plan",
      "--repo",
      controller.repo,
      "--base",
      "main",
      "--head",
      "more-web",
    ]).catch((error: { stdout: string; code: number }) => error);
    expect(cli.stdout).toBe(body.text);
    expect((await fetch(`${controller.url}/api/plan?base=main&head=no-such-branch`)).status).toBe(404);
    expect((await fetch(`${controller.url}/api/plan?base=--upload-pack&head=main`)).status).toBe(400);
  });

  it("streams the status commit to live dashboards", async () => {
    const response = await fetch(`${controller.url}/api/events`);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const reader = response.body?.getReader();
    const { value: chunk } = (await reader?.read()) ?? {};
    await reader?.cancel();
    expect(new TextDecoder().decode(chunk)).toMatch(
      /^event: status\ndata: \{"statusCommit":"[0-9a-f]{40}"\}/,
    );
  });
});

describe("gitfleet status", () => {
  it("prints the same clusters and apps as the API, from the status branch, and exits 0 when all is Healthy", async () => {
    const run = await execFileAsync(process.execPath, [BIN, "status", "--repo", controller.repo]).catch(
      (error: { code: number; stdout: string }) => error,
    );
    const stdout = run.stdout;
    expect("code" in run ? run.code : 0, stdout).toBe(0);
    const { body } = await getJson<{ clusters: { name: string; state: string; region: string }[] }>(
      `${controller.url}/api/clusters`,
    );
    for (const cluster of body.clusters)
      expect(stdout).toMatch(new RegExp(`^${cluster.name} +${cluster.state} +\\S+ +${cluster.region} `, "m"));
    const { body: web } = await getJson<{
      workloads: { clusters: Record<string, { desired: number; ready: number }> }[];
    }>(`${controller.url}/api/apps/web`);
    const cells = web.workloads[0]?.clusters ?? {};
    const header = stdout.split("\n").find((line) => line.startsWith("APP ")) ?? "";
    const row = stdout.split("\n").find((line) => line.startsWith("web ")) ?? "";
    const columns = header.split(/\s+/).slice(2);
    expect(row.split(/\s+/).slice(2)).toEqual(
      columns.map((c) => (cells[c] ? `${cells[c].ready}/${cells[c].desired}` : "-")),
    );
  });

  it("lists the clusters below a Kubernetes version, as the members reported it, and exits 2 when there are any", async () => {
    const below = await execFileAsync(process.execPath, [
      BIN,
      "status",
      "--repo",
      controller.repo,
      "--below",
      "v1.33.0",
    ]).catch((error: { code: number; stdout: string }) => error);
    expect("code" in below ? below.code : 0).toBe(2);
    const { body } = await getJson<{ clusters: { name: string }[] }>(`${controller.url}/api/clusters`);
    for (const cluster of body.clusters)
      expect(below.stdout).toMatch(new RegExp(`^${cluster.name} +v1\\.32\\.0-gitfleet-sim `, "m"));
    const none = await execFileAsync(process.execPath, [
      BIN,
      "status",
      "--repo",
      controller.repo,
      "--below",
      "v1.32.0",
    ]);
    expect(none.stdout).toBe("No cluster reports a version below v1.32.0.\n");
  });

  it("exits 1 on a repository nothing reconciled yet", async () => {
    const bare = `${controller.repo}-bare.git`;
    gitIn(
      controller.repo,
      "clone",
      "-q",
      "--bare",
      "--single-branch",
      "--branch",
      "main",
      controller.repo,
      bare,
    );
    const failed = await execFileAsync(process.execPath, [BIN, "status", "--repo", bare]).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed).toMatchObject({ code: 1 });
    expect((failed as { stderr: string }).stderr).toMatch(/no gitfleet\/status branch/);
  });
});

describe("/metrics", () => {
  it("has every series docs/observing.md documents", async () => {
    const readme = readFileSync(fileURLToPath(new URL("../../docs/observing.md", import.meta.url)), "utf8");
    const section = readme.slice(
      readme.indexOf("## Metrics"),
      readme.indexOf("\n## ", readme.indexOf("## Metrics") + 1),
    );
    const documented = [
      ...new Set([...section.matchAll(/`(gitfleet_[a-z_]+)`/g)].map((m) => m[1] as string)),
    ];
    expect(documented.length).toBeGreaterThanOrEqual(12);
    const { text } = await scrape();
    for (const name of documented) expect(text, name).toContain(`# TYPE ${name} `);
  });

  it("has sane values after the reconciles and syncs that happened", async () => {
    const count = () => Number(gitIn(controller.repo, "rev-list", "--count", "gitfleet/status"));
    const before = count();
    const { series } = await scrape();
    const after = count();
    const within = (n: number) => {
      expect(n).toBeGreaterThanOrEqual(before);
      expect(n).toBeLessThanOrEqual(after);
    };
    expect(value(series, "gitfleet_ready")).toBe(1);
    // One controller without leader election leads.
    expect(value(series, "gitfleet_leader")).toBe(1);
    expect(value(series, "gitfleet_reconciles_total", { result: "committed" })).toBeGreaterThanOrEqual(1);
    expect(value(series, "gitfleet_reconcile_duration_seconds_count", { stage: "total" })).toBe(
      value(series, "gitfleet_reconciles_total") -
        value(series, "gitfleet_reconciles_total", { result: "error" }),
    );
    const stages = new Set(
      series.filter((s) => s.name === "gitfleet_reconcile_duration_seconds_count").map((s) => s.labels.stage),
    );
    expect([...stages].sort()).toEqual([
      "fetch",
      "publish",
      "read",
      "reconcile",
      "restore",
      "total",
      "write",
    ]);
    expect(value(series, "gitfleet_reconcile_duration_seconds_sum", { stage: "total" })).toBeGreaterThan(0);
    // Every reconcile that rendered says what it computed again; the first rendered every app from every file.
    const recomputed = (unit: string, what: "count" | "sum") =>
      value(series, `gitfleet_reconcile_recomputed_${what}`, { unit });
    expect(recomputed("apps", "count")).toBeGreaterThanOrEqual(1);
    for (const unit of ["files", "pairs"])
      expect(recomputed(unit, "count"), unit).toBe(recomputed("apps", "count"));
    expect(recomputed("files", "sum")).toBeGreaterThanOrEqual(1);
    expect(recomputed("apps", "sum")).toBeGreaterThanOrEqual(1);
    // web alone renders on east, west and north.
    expect(recomputed("pairs", "sum")).toBeGreaterThanOrEqual(3);
    expect(value(series, "gitfleet_source_commits_total")).toBeGreaterThanOrEqual(1);
    // Every status commit this process wrote is counted once, by kind; the branch has no other writer.
    within(value(series, "gitfleet_status_commits_total"));
    expect(value(series, "gitfleet_status_commits_total", { kind: "reconcile" })).toBeGreaterThanOrEqual(1);
    within(value(series, "gitfleet_git_operations_total", { operation: "push", result: "ok" }));
    expect(value(series, "gitfleet_git_operations_total", { result: "error" })).toBe(0);
    expect(value(series, "gitfleet_failovers_total")).toBe(0);
    for (const cluster of ["east", "west", "north", "lab"]) {
      expect(value(series, "gitfleet_cluster_ready", { cluster }), cluster).toBe(1);
      expect(value(series, "gitfleet_cluster_reachable", { cluster }), cluster).toBe(1);
      // web's Deployment and ConfigMap were created where web runs; lab (tainted) gets nothing.
      expect(value(series, "gitfleet_sync_operations_total", { cluster, result: "created" }), cluster).toBe(
        cluster === "lab" ? 0 : 2,
      );
    }
    const web = { app: "web", workload: "Deployment shop/web" };
    expect(value(series, "gitfleet_app_desired_replicas", web)).toBe(6);
    expect(value(series, "gitfleet_app_desired_replicas", { ...web, cluster: "lab" })).toBe(0);
    // Every replica of web has a cluster: none placed nowhere.
    expect(
      series.filter((s) => s.name === "gitfleet_app_unplaced_replicas" && s.labels.app === "web"),
    ).toEqual([{ name: "gitfleet_app_unplaced_replicas", labels: web, value: 0 }]);
    for (const cluster of ["east", "west", "north"])
      expect(value(series, "gitfleet_app_ready_replicas", { ...web, cluster }), cluster).toBe(
        value(series, "gitfleet_app_desired_replicas", { ...web, cluster }),
      );
    // web's health in each cluster it runs in: one series per state, 1 for the one it is in.
    for (const cluster of ["east", "west", "north"]) {
      expect(value(series, "gitfleet_app_health", { app: "web", cluster, health: "Healthy" }), cluster).toBe(
        1,
      );
      expect(value(series, "gitfleet_app_health", { app: "web", cluster, health: "Degraded" }), cluster).toBe(
        0,
      );
      expect(value(series, "gitfleet_app_failed_objects", { app: "web", cluster }), cluster).toBe(0);
    }
    for (const cluster of ["east", "west", "north", "lab"])
      expect(value(series, "gitfleet_cluster_prune_blocked", { cluster }), cluster).toBe(0);
    expect(value(series, "process_resident_memory_bytes")).toBeGreaterThan(0);
  });
});
