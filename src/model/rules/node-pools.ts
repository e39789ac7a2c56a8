import { explainKubeletSkew, parseKubeVersion } from "../../apimachinery/kube-version.js";
import { explainNodeLabel, MIN_NOT_READY_FOR_MS, MIN_TOKEN_TTL_MS } from "../controlplane/node-pools.js";
import { parseDuration } from "../duration.js";
import { DEFAULT_DRIFT_INTERVAL_MS } from "../fleet-defaults.js";
import type { Cluster, ControlPlaneClass, NodePoolSpec } from "../types.js";
import type { Path, RuleContext } from "./rule.js";

/**
 * A hosted cluster's node pools must be joinable as written: unique names, labels a kubelet may set
 * on its own Node, a join token that lives long enough to be used, and a kubelet version Kubernetes'
 * skew policy allows against the API server — the class's or the cluster's version, and the version
 * every ControlPlaneUpgrade that lists the cluster moves it to (an upgrade that would leave a pool
 * more than three minors behind waits for the pool to be upgraded first).
 */
export function checkNodePools(context: RuleContext): void {
  const classes = new Map(context.model.controlPlaneClasses.map((c) => [c.metadata.name, c]));
  for (const cluster of context.model.clusters) {
    const seen = new Set<string>();
    (cluster.spec.controlPlane?.nodePools ?? []).forEach((pool, index) => {
      const check = new PoolCheck(context, cluster, index);
      if (seen.has(pool.name))
        check.report(["name"], "DUPLICATE_NAME", `node pool "${pool.name}" is defined twice in this cluster`);
      seen.add(pool.name);
      check.labels(pool);
      check.tokenTTL(pool, driftIntervalMs(context));
      check.repair(pool);
      check.skew(pool, versionsAgainst(context, cluster, classes));
    });
  }
}

// How often the host syncs without a commit at least: when join tokens are renewed.
function driftIntervalMs(context: RuleContext): number {
  const given = context.model.fleet?.spec?.driftInterval;
  return (given === undefined ? undefined : parseDuration(given)) ?? DEFAULT_DRIFT_INTERVAL_MS;
}

// The API server versions a cluster's kubelets meet: its own (or its class's), and each upgrade's.
function versionsAgainst(
  context: RuleContext,
  cluster: Cluster,
  classes: ReadonlyMap<string, ControlPlaneClass>,
): [string, string][] {
  const spec = cluster.spec.controlPlane;
  const own = spec?.version ?? (spec ? classes.get(spec.class)?.spec.version : undefined);
  const upgrades = (context.model.controlPlaneUpgrades ?? []).filter((u) =>
    u.spec.batches.some((b) => b.clusters.includes(cluster.metadata.name)),
  );
  return [
    ...(own === undefined ? [] : [[own, "the control plane's version"] as [string, string]]),
    ...upgrades.map((u): [string, string] => [u.spec.version, `ControlPlaneUpgrade ${u.metadata.name}`]),
  ];
}

class PoolCheck {
  constructor(
    private readonly context: RuleContext,
    private readonly cluster: Cluster,
    private readonly index: number,
  ) {}

  report(path: Path, code: "DUPLICATE_NAME" | "INVALID_FIELD_COMBINATION", message: string): void {
    this.context.reporter.report({
      origin: this.cluster.origin,
      path: ["spec", "controlPlane", "nodePools", this.index, ...path],
      code,
      message,
    });
  }

  labels(pool: NodePoolSpec): void {
    for (const key of Object.keys(pool.labels ?? {})) {
      const why = explainNodeLabel(key);
      if (why) this.report(["labels", key], "INVALID_FIELD_COMBINATION", `label ${key}: ${why}`);
    }
  }

  tokenTTL(pool: NodePoolSpec, driftMs: number): void {
    const ttl = pool.join?.tokenTTL;
    const ms = ttl === undefined ? undefined : parseDuration(ttl);
    if (ms === undefined) return;
    if (ms < MIN_TOKEN_TTL_MS)
      this.report(
        ["join", "tokenTTL"],
        "INVALID_FIELD_COMBINATION",
        `a join token must live at least ${MIN_TOKEN_TTL_MS / 1000}s (${ttl} is too short to be used)`,
      );
    // A new token is minted when the host syncs and the newest has less than half its life left.
    else if (ms < 2 * driftMs)
      this.context.reporter.report({
        origin: this.cluster.origin,
        path: ["spec", "controlPlane", "nodePools", this.index, "join", "tokenTTL"],
        severity: "warning",
        code: "INVALID_FIELD_COMBINATION",
        message: `join tokens are renewed when the host syncs, at least every driftInterval (${driftMs / 1000}s): tokens that live ${ttl} leave times with no valid token to join with; at least twice the driftInterval avoids that`,
      });
  }

  repair(pool: NodePoolSpec): void {
    const text = pool.repair?.notReadyFor;
    const ms = text === undefined ? undefined : parseDuration(text);
    if (ms !== undefined && ms < MIN_NOT_READY_FOR_MS)
      this.report(
        ["repair", "notReadyFor"],
        "INVALID_FIELD_COMBINATION",
        `a node must be NotReady at least ${MIN_NOT_READY_FOR_MS / 1000}s before it is removed (${text} would remove nodes that only missed a heartbeat)`,
      );
  }

  skew(pool: NodePoolSpec, against: readonly [string, string][]): void {
    const text = pool.kubeletVersion ?? against[0]?.[0];
    const kubelet = text === undefined ? undefined : parseKubeVersion(text);
    if (!kubelet) return;
    for (const [version, what] of against) {
      const server = parseKubeVersion(version);
      const why = server ? explainKubeletSkew(kubelet, server) : undefined;
      if (why)
        this.report(
          [pool.kubeletVersion === undefined ? "name" : "kubeletVersion"],
          "INVALID_FIELD_COMBINATION",
          `node pool ${pool.name}: kubelet ${text} against ${what} (${version}): ${why}`,
        );
    }
  }
}
