import { parse } from "yaml";
import type { Json } from "../../src/apimachinery/json.js";
import { emitYaml } from "../../src/render/yaml-emitter.js";
import { appStatusPath } from "../../src/status/status-files.js";

// Status files as the controller writes them (status/apps/, status/clusters/, status/source.yaml,
// status/migrations/), for the view tests: written here as YAML for reading, and emitted by the
// controller's own emitter so the view reads exactly the text the branch holds.

/** The text the controller's emitter writes for the same content. */
const emitted = (text: string) => emitYaml(parse(text) as Json);

export const SOURCE = `sourceCommit: ${"a".repeat(40)}
renderedCommit: ${"a".repeat(40)}
valid: true
errors: 0
warnings: 0
problems: []
`;

export const clusterFile = (name: string, observed: string) =>
  `cluster: ${name}\nobjects: 4\napps:\n  web: 4\n${observed ? `observed:\n${observed}` : ""}`;

export const HEALTHY_EAST = `  condition:
    ready: true
    since: "2026-11-30T08:00:00.000Z"
    taints: []
  reachable: true
  syncedCommit: ${"a".repeat(40)}
  objects: 4
  inventory: 4
  health:
    Healthy: 4
  conflicts: 0
  failed: 0
  drifted: 0
  kubernetesVersion: v1.33.4
  capacity:
    nodes: 3
    readyNodes: 3
    cpu:
      allocatable: 12
      requested: 0.6
    memory:
      allocatable: 51539607552
      requested: 805306368
    pods:
      allocatable: 330
      requested: 6
`;

export const NOT_READY_WEST = `  condition:
    ready: false
    reason: Unreachable
    since: "2026-11-30T08:05:00.000Z"
    lastError: connect ECONNREFUSED
    taints:
      - cluster.gitfleet.io/not-ready:NoExecute
  reachable: false
  error: connect ECONNREFUSED 127.0.0.1:1
`;

export const WEB_APP = `app: web
sourceCommit: ${"a".repeat(40)}
clusters:
  east:
    objects: 2
    desiredReplicas:
      Deployment shop/web: 4
  west:
    objects: 2
    desiredReplicas:
      Deployment shop/web: 2
workloads:
  - identity: apps/Deployment/shop/web
    resource: Deployment shop/web
    placement: web
    replicas: 6
    decision:
      clusters:
        east: 4
        west: 2
      unschedulable: 0
      diagnosis:
        summary: "2/3 clusters available: 1 untolerated taint {gpu=true:NoSchedule}"
        filtered:
          north: "untolerated taint {gpu=true:NoSchedule}"
        frozen: {}
        notSelected: {}
        selected:
          - east
          - west
errors: []
observed:
  east:
    health: Healthy
    syncedCommit: ${"a".repeat(40)}
    ready:
      Deployment shop/web: 4/4
  west:
    health: Degraded
    reason: "Deployment shop/web: 1 of 2 replicas ready"
    syncedCommit: ${"a".repeat(40)}
    ready:
      Deployment shop/web: 1/2
`;

export const API_APP = `app: api
sourceCommit: ${"b".repeat(40)}
clusters:
  east:
    objects: 1
    desiredReplicas:
      Deployment shop/api: 2
workloads:
  - identity: apps/Deployment/shop/api
    resource: Deployment shop/api
    placement: api
    replicas: 2
    decision:
      clusters:
        east: 2
      unschedulable: 0
      diagnosis:
        summary: 1/1 clusters available
        filtered: {}
        frozen: {}
        notSelected: {}
        selected:
          - east
errors: []
observed:
  east:
    health: Healthy
    syncedCommit: ${"b".repeat(40)}
    ready:
      Deployment shop/api: 2/2
`;

export const MIGRATION = `migration: legacy
batches:
  - name: test
    state: Succeeded
    since: "2026-11-30T08:00:00.000Z"
    approvedIn: ${"c".repeat(40)}
    apps:
      web:
        east: Healthy
  - name: prod
    state: WaitingApproval
    since: "2026-11-30T08:10:00.000Z"
    reason: "approved: true in a reviewed commit starts it"
    apps: {}
detached: []
`;

/** A fleet's status files: east Healthy with capacity, west NotReady; web Degraded in west, api Healthy. */
export function fleetFiles(): Map<string, string> {
  return statusFiles({
    "status/source.yaml": SOURCE,
    "status/clusters/east.yaml": clusterFile("east", HEALTHY_EAST),
    "status/clusters/west.yaml": clusterFile("west", NOT_READY_WEST),
    [appStatusPath("web")]: WEB_APP,
    [appStatusPath("api")]: API_APP,
    "status/migrations/legacy.yaml": MIGRATION,
  });
}

/** The files by path, each as the emitter writes it. */
export function statusFiles(files: Record<string, string>): Map<string, string> {
  return new Map(Object.entries(files).map(([path, text]) => [path, emitted(text)]));
}
