import git from "isomorphic-git";
import { parse } from "yaml";
import type { FleetRepo } from "../git/fleet-repo.js";
import { gitFs as fs } from "../git/git-fs.js";
import { parseDuration } from "../model/duration.js";

/** fleet.yaml spec.statusInterval's default: at most one observed-status commit per 30 s. */
export const DEFAULT_STATUS_INTERVAL_MS = 30_000;

/** The loop settings fleet.yaml may give (spec.statusBranch, spec.reconcileInterval, spec.commitAuthor). */
export interface FleetSettings {
  readonly statusBranch?: string;
  readonly reconcileIntervalMs?: number;
  /** spec.statusInterval: at most one observed-status commit per this long. */
  readonly statusIntervalMs?: number;
  /** spec.driftInterval: members are compared with the rendered tree (and corrected) this often. */
  readonly driftIntervalMs?: number;
  /** spec.autoscaleInterval: FederatedHPAs sample and may change a total this often. */
  readonly autoscaleIntervalMs?: number;
  readonly author?: { readonly name: string; readonly email: string };
}

/**
 * Reads the loop's settings from fleet.yaml at the source branch's tip, before the first reconcile
 * (the status branch's name must be known to fetch it). Anything missing or malformed is left to the
 * defaults; the reconcile itself validates fleet.yaml and reports its problems with positions.
 */
export async function readFleetSettings(repo: FleetRepo, branch: string): Promise<FleetSettings> {
  await repo.fetch([branch]);
  const tip = await repo.branchTip(branch);
  if (!tip) return {};
  const blob = await git
    .readBlob({ fs, gitdir: repo.gitdir, cache: repo.cache, oid: tip, filepath: "fleet.yaml" })
    .catch(() => undefined);
  if (!blob) return {};
  let spec: Record<string, unknown> = {};
  try {
    const value = parse(new TextDecoder().decode(blob.blob), { version: "1.1" }) as {
      spec?: Record<string, unknown>;
    };
    spec = value?.spec ?? {};
  } catch {
    return {};
  }
  const author = spec.commitAuthor as { name?: unknown; email?: unknown } | undefined;
  const duration = (value: unknown) => (typeof value === "string" ? parseDuration(value) : undefined);
  const interval = duration(spec.reconcileInterval);
  const statusInterval = duration(spec.statusInterval);
  const driftInterval = duration(spec.driftInterval);
  const autoscaleInterval = duration(spec.autoscaleInterval);
  return {
    ...(typeof spec.statusBranch === "string" ? { statusBranch: spec.statusBranch } : {}),
    ...(interval ? { reconcileIntervalMs: interval } : {}),
    ...(statusInterval ? { statusIntervalMs: statusInterval } : {}),
    ...(driftInterval ? { driftIntervalMs: driftInterval } : {}),
    ...(autoscaleInterval !== undefined ? { autoscaleIntervalMs: autoscaleInterval } : {}),
    ...(typeof author?.name === "string" && typeof author.email === "string"
      ? { author: { name: author.name, email: author.email } }
      : {}),
  };
}
