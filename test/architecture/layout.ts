/**
 * The layout of src/, in one table: each top folder, whether it is pure (a function of data: no I/O,
 * clock, randomness or environment) or an edge (Git, Kubernetes, HTTP, files, processes), and the
 * folders it may import. The architecture tests, each folder's README and the README's Layout section
 * all say what this table says.
 */
export interface Folder {
  readonly kind: "pure" | "edge";
  readonly imports: readonly string[];
}

// The fleet repo as data, bottom up: Kubernetes' own semantics, the fleet model and its rules, the
// manifest builders, and the load that runs them.
const MODEL = ["apimachinery", "model", "manifests", "load"];
const SCHEDULE = [...MODEL, "schedule"];
const POLICIES = [...SCHEDULE, "autoscale", "failover", "migrate"];
const RENDER = [...POLICIES, "render"];
const SYNC = [...RENDER, "sync"];
const STATUS = [...SYNC, "status"];
const PURE = [...STATUS, "policy", "plan", "reconcile", "observe"];

export const LAYOUT: Readonly<Record<string, Folder>> = {
  // The pure core, bottom up: each layer imports only the layers below it.
  apimachinery: { kind: "pure", imports: [] },
  model: { kind: "pure", imports: ["apimachinery"] },
  manifests: { kind: "pure", imports: ["apimachinery", "model"] },
  load: { kind: "pure", imports: ["apimachinery", "model", "manifests"] },
  schedule: { kind: "pure", imports: MODEL },
  autoscale: { kind: "pure", imports: SCHEDULE },
  failover: { kind: "pure", imports: SCHEDULE },
  migrate: { kind: "pure", imports: SCHEDULE },
  render: { kind: "pure", imports: POLICIES },
  sync: { kind: "pure", imports: RENDER },
  status: { kind: "pure", imports: SYNC },
  policy: { kind: "pure", imports: STATUS },
  plan: { kind: "pure", imports: STATUS },
  observe: { kind: "pure", imports: STATUS },
  reconcile: { kind: "pure", imports: [...STATUS, "plan"] },
  // The edges: they may import the core and the edges listed.
  util: { kind: "edge", imports: [] },
  log: { kind: "edge", imports: [] },
  source: { kind: "edge", imports: MODEL },
  helm: { kind: "edge", imports: [...MODEL, "util"] },
  builds: { kind: "edge", imports: [...MODEL, "helm", "util"] },
  credentials: { kind: "edge", imports: MODEL },
  git: { kind: "edge", imports: [...PURE, "util"] },
  forge: { kind: "edge", imports: ["util"] },
  objectstore: { kind: "edge", imports: ["util"] },
  backup: { kind: "edge", imports: [...MODEL, "objectstore", "util"] },
  notify: { kind: "edge", imports: [...PURE, "forge", "util"] },
  kube: { kind: "edge", imports: [...PURE, "credentials", "util"] },
  sim: { kind: "edge", imports: [...PURE, "kube", "util"] },
  metrics: { kind: "edge", imports: PURE },
  controller: {
    kind: "edge",
    imports: [...PURE, "builds", "credentials", "forge", "git", "helm", "kube", "notify", "util", "log"],
  },
  agent: {
    kind: "edge",
    imports: [...PURE, "builds", "credentials", "git", "helm", "kube", "controller", "util", "log"],
  },
  revisions: { kind: "edge", imports: [...PURE, "builds", "git", "helm", "kube", "util"] },
  server: { kind: "edge", imports: [...PURE, "git", "revisions", "util", "log"] },
  cli: {
    kind: "edge",
    imports: [
      ...PURE,
      "agent",
      "backup",
      "builds",
      "controller",
      "credentials",
      "forge",
      "git",
      "notify",
      "helm",
      "kube",
      "log",
      "metrics",
      "revisions",
      "server",
      "sim",
      "source",
      "util",
    ],
  },
};

/** What a pure folder may not touch, as patterns over its source. */
export const IMPURE: readonly [string, RegExp][] = [
  ["a Node.js built-in", /from "node:/],
  ["the filesystem", /from "(fs|path|os|child_process|net|http|https)"/],
  ["isomorphic-git", /from "isomorphic-git/],
  ["the Kubernetes client", /from "@kubernetes\//],
  ["the logger", /from "pino"/],
  // new Date(ms) formats a given time; only reading the clock is impure.
  ["the clock", /Date\.now\(|new Date\(\)/],
  ["randomness", /Math\.random\(/],
  ["the environment", /process\.env/],
  ["the process", /process\.(stdout|stderr|exit)/],
  ["the console", /console\./],
];

/** The most lines a file of src/ holds; a longer one is listed below with why. */
export const MAX_FILE_LINES = 600;

/** Files of src/ over MAX_FILE_LINES, each with the reason it may be. */
export const LONG_FILES: Readonly<Record<string, string>> = {};

/** The files of policy/ that edges driving the round may import: the registry and the seam's types, never a policy. */
export const POLICY_ENTRY = ["policy/registry.ts", "policy/policy.ts"];
