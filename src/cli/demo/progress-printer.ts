import fs from "node:fs";
import git from "isomorphic-git";
import type { ControllerReport } from "../../controller/controller.js";
import type { StatusReader } from "../../git/status-reader.js";
import { eventTrailer } from "../../model/trailers.js";
import type { FleetView } from "../../observe/fleet-view.js";
import type { CommandOutput } from "../output.js";

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
export class ProgressPrinter {
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
