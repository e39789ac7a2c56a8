import { beforeAll, describe, expect, it } from "vitest";
import { loadFleet } from "../../../src/load/load-fleet.js";
import { resolveControlPlanes } from "../../../src/model/controlplane/hosted-control-plane.js";
import type { FileTree } from "../../../src/model/file-tree.js";
import type { Problem } from "../../../src/model/problem.js";
import type { FleetModel } from "../../../src/model/types.js";
import { readDirectoryTree } from "../../../src/source/read-directory.js";
import { HOSTED_EXAMPLE_DIR } from "../../helpers/hosted-example.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

let example: FileTree;
beforeAll(async () => {
  example = await readDirectoryTree(HOSTED_EXAMPLE_DIR);
});

type Edit = Readonly<Record<string, string | ((text: string) => string) | null>>;

function edited(edit: Edit): FileTree {
  const tree = new Map(example);
  for (const [path, change] of Object.entries(edit)) {
    if (change === null) tree.delete(path);
    else if (typeof change === "string") tree.set(path, encoder.encode(change));
    else tree.set(path, encoder.encode(change(decoder.decode(tree.get(path) ?? new Uint8Array()))));
  }
  return tree;
}

const replace = (from: string | RegExp, to: string) => (text: string) => {
  const out = text.replace(from, to);
  if (out === text) throw new Error(`edit did not apply: ${String(from)}`);
  return out;
};

function hostedCluster(name: string, controlPlane: string, extra = ""): string {
  return `apiVersion: gitfleet.io/v1alpha1
kind: Cluster
metadata:
  name: ${name}
spec:${extra}
  controlPlane:
${controlPlane
  .trim()
  .split("\n")
  .map((line) => `    ${line}`)
  .join("\n")}
`;
}

const SMALL_CLASS = `apiVersion: gitfleet.io/v1alpha1
kind: ControlPlaneClass
metadata:
  name: small
spec:
  version: v1.34.1
  apiServer: { replicas: 1 }
  etcd: { version: 3.6.4-0 }
`;

function upgradeFile(name: string, version: string, batches: string): string {
  return `apiVersion: gitfleet.io/v1alpha1
kind: ControlPlaneUpgrade
metadata:
  name: ${name}
spec:
  version: ${version}
  batches:
${batches
  .trim()
  .split("\n")
  .map((line) => `    ${line}`)
  .join("\n")}
`;
}

interface Case {
  readonly name: string;
  readonly edit: Edit;
  /** file:line, code, and a part of the message of one error the load must report. */
  readonly error: { readonly at: string; readonly code: Problem["code"]; readonly message: string };
}

const restoreFile = (cluster: string, snapshot = "etcd-backup-1.db") =>
  `apiVersion: gitfleet.io/v1alpha1\nkind: EtcdRestore\nmetadata:\n  name: r1\nspec:\n  cluster: ${cluster}\n  snapshot: ${snapshot}\n`;

// pc-3: a dedicated etcd of the class's three members, behind a LoadBalancer.
const REPLICATED_PC3 = hostedCluster("pc-3", "host: meta-1\nclass: standard\nexpose: { type: LoadBalancer }");
const namedRestore = (name: string) =>
  `apiVersion: gitfleet.io/v1alpha1\nkind: EtcdRestore\nmetadata:\n  name: ${name}\nspec:\n  cluster: pc-3\n  snapshot: etcd-backup-1.db\n`;

// controlplanes/cve.yaml: an upgrade to v1.34.2 that also moves etcd to `etcd`, with `extra` spec lines.
const etcdUpgrade = (etcd: string, batches: string, extra = "") =>
  upgradeFile("cve", "v1.34.2", batches).replace(
    "  batches:\n",
    `  etcd: { version: ${etcd} }\n${extra}  batches:\n`,
  );

// The example class with a Flannel pod network over `podCIDR`; pc-2's workers pool with `replicas` nodes.
const withCni = (podCIDR: string): Edit => ({
  "controlplanes/standard.yaml": (text: string) =>
    `${text}  addons:\n    cni: { plugin: flannel, podCIDR: ${podCIDR} }\n    kubeProxy: { mode: nftables }\n`,
});
const workers = (replicas: number): Edit => ({
  "clusters/pc-2.yaml": replace("        replicas: 3\n", `        replicas: ${replicas}\n`),
});

// controlplanes/swap.yaml: an EtcdMemberReplacement of one member.
const replacementFile = (cluster: string, member: string) =>
  `apiVersion: gitfleet.io/v1alpha1\nkind: EtcdMemberReplacement\nmetadata:\n  name: swap\nspec:\n  cluster: ${cluster}\n  member: ${member}\n`;

// The example class (its members' volumes are 20Gi) with an etcd quota.
const withQuota = (quota: string) =>
  replace("    storage: 20Gi\n", `    storage: 20Gi\n    quota: ${quota}\n`);

const CASES: readonly Case[] = [
  ...(
    [
      ["10.244.0.1/16", "names an address inside its range"],
      ["10.0.0.0/7", "is a /7: a pod range is /8 to /22"],
      ["10.244.0.0/23", "is a /23: a pod range is /8 to /22"],
      ["10.96.0.0/16", "overlaps the Service range 10.96.0.0/12"],
      ["10.96.0.0/11", "overlaps the Service range 10.96.0.0/12"],
      ["10.111.255.0/22", "overlaps the Service range 10.96.0.0/12"],
    ] as const
  ).map(([podCIDR, message]) => ({
    name: `a pod range ${podCIDR}`,
    edit: withCni(podCIDR),
    error: { at: "controlplanes/standard.yaml:30", code: "INVALID_FIELD_COMBINATION" as const, message },
  })),
  {
    name: "a cluster whose pools need more /24s than the pod range has",
    edit: { ...withCni("10.244.0.0/22"), ...workers(5) },
    error: {
      at: "clusters/pc-2.yaml:24",
      code: "INVALID_FIELD_COMBINATION",
      message: "the node pools ask for 5 nodes, but class standard's podCIDR 10.244.0.0/22 has room for 4",
    },
  },
  {
    name: "an upgrade's etcd version for a cluster of a shared etcd",
    edit: { "controlplanes/cve.yaml": etcdUpgrade("3.6.5-0", "- { name: a, clusters: [pc-1] }") },
    error: {
      at: "controlplanes/cve.yaml:9",
      code: "INVALID_FIELD_COMBINATION",
      message: 'shared etcd "etcd-a"',
    },
  },
  ...(
    [
      ["3.5.21-0", "", "- { name: a, clusters: [pc-3] }", 7, "etcd cannot go back a minor version"],
      ["3.8.0-0", "", "- { name: a, clusters: [pc-3] }", 7, "etcd upgrades one minor version at a time"],
      ["3.7.0-0", "", "- { name: a, clusters: [pc-3], rollback: true }", 9, "cannot be rolled back"],
      ["3.7.0-0", "  onFailure: Rollback\n", "- { name: a, clusters: [pc-3] }", 8, "cannot be rolled back"],
    ] as const
  ).map(([etcd, extra, batches, line, message]) => ({
    name: `an upgrade's etcd ${etcd} from 3.6.4-0${extra || batches.includes("rollback") ? " with a rollback" : ""}`,
    edit: {
      "clusters/pc-3.yaml": REPLICATED_PC3,
      "controlplanes/cve.yaml": etcdUpgrade(etcd, batches, extra),
    },
    error: { at: `controlplanes/cve.yaml:${line}`, code: "INVALID_FIELD_COMBINATION" as const, message },
  })),
  ...(
    [
      ["15Mi", "at least 16Mi"],
      ["8193Mi", "at most 8Gi"],
      ['"16777215"', "at least 16Mi"],
    ] as const
  ).map(([quota, message]) => ({
    name: `an etcd quota of ${quota}`,
    edit: { "controlplanes/standard.yaml": withQuota(quota) },
    error: { at: "controlplanes/standard.yaml:20", code: "INVALID_FIELD_COMBINATION" as const, message },
  })),
  {
    name: "an etcd quota past the members' volume",
    edit: {
      "controlplanes/standard.yaml": (text: string) =>
        replace("    storage: 20Gi\n", "    storage: 5Gi\n")(withQuota("6Gi")(text)),
    },
    error: {
      at: "controlplanes/standard.yaml:20",
      code: "INVALID_FIELD_COMBINATION",
      message: "6Gi is more than etcd.storage 5Gi",
    },
  },
  {
    name: "off-host backups of a cluster of a shared etcd",
    edit: {
      "controlplanes/standard.yaml": replace(
        '      schedule: "0 */6 * * *"\n',
        '      schedule: "0 */6 * * *"\n      offHost: { store: offsite, image: registry.example.com/gitfleet:0.1.0 }\n',
      ),
    },
    error: {
      at: "clusters/pc-1.yaml:15",
      code: "INVALID_FIELD_COMBINATION",
      message: "sends backups to store offsite: off-host backups cover dedicated etcds only",
    },
  },
  {
    name: "a member replacement of an unknown cluster",
    edit: { "controlplanes/swap.yaml": replacementFile("pc-9", "etcd-1") },
    error: {
      at: "controlplanes/swap.yaml:6",
      code: "UNKNOWN_REFERENCE",
      message: 'unknown hosted cluster "pc-9"',
    },
  },
  {
    name: "a member replacement of a cluster that is not hosted",
    edit: { "controlplanes/swap.yaml": replacementFile("meta-1", "etcd-1") },
    error: { at: "controlplanes/swap.yaml:6", code: "UNKNOWN_REFERENCE", message: '"meta-1" is not hosted' },
  },
  {
    name: "a member replacement of an etcd of one member",
    edit: {
      "clusters/pc-3.yaml": hostedCluster(
        "pc-3",
        "host: meta-1\nclass: small\nexpose: { type: HostPort, port: 16443, address: 10.0.0.5 }",
      ),
      "controlplanes/small.yaml": SMALL_CLASS,
      "controlplanes/swap.yaml": replacementFile("pc-3", "etcd-0"),
    },
    error: { at: "controlplanes/swap.yaml:6", code: "INVALID_FIELD_COMBINATION", message: "has one member" },
  },
  {
    // Three members: etcd-0, etcd-1, etcd-2.
    name: "a member replacement of a member past the etcd's last",
    edit: {
      "clusters/pc-3.yaml": REPLICATED_PC3,
      "controlplanes/swap.yaml": replacementFile("pc-3", "etcd-3"),
    },
    error: {
      at: "controlplanes/swap.yaml:7",
      code: "UNKNOWN_REFERENCE",
      message: 'has no member "etcd-3" (its members: etcd-0, etcd-1, etcd-2)',
    },
  },
  {
    name: "a member replacement naming a dedicated etcd's member in a shared etcd",
    edit: { "controlplanes/swap.yaml": replacementFile("pc-1", "etcd-1") },
    error: {
      at: "controlplanes/swap.yaml:7",
      code: "UNKNOWN_REFERENCE",
      message:
        'etcd gitfleet-etcd-etcd-a/etcd-a has no member "etcd-1" (its members: etcd-a-0, etcd-a-1, etcd-a-2)',
    },
  },
  {
    name: "a member replacement without its member",
    edit: {
      "controlplanes/swap.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: EtcdMemberReplacement\nmetadata:\n  name: swap\nspec:\n  cluster: pc-1\n",
    },
    error: {
      at: "controlplanes/swap.yaml:5",
      code: "MISSING_FIELD",
      message: 'missing required field "member"',
    },
  },
  {
    // Its Jobs are etcd-restore-<name>-<ordinal>: 13 + 48 + 2 = 63.
    name: "a restore of a replicated etcd whose name leaves no room for its members' Jobs",
    edit: { "clusters/pc-3.yaml": REPLICATED_PC3, "controlplanes/r1.yaml": namedRestore("r".repeat(49)) },
    error: { at: "controlplanes/r1.yaml:4", code: "INVALID_NAME", message: "at most 48 characters" },
  },
  {
    name: "a restore of an unknown cluster",
    edit: { "controlplanes/r1.yaml": restoreFile("pc-9") },
    error: {
      at: "controlplanes/r1.yaml:6",
      code: "UNKNOWN_REFERENCE",
      message: 'unknown hosted cluster "pc-9"',
    },
  },
  {
    name: "a restore of a shared etcd",
    edit: { "controlplanes/r1.yaml": restoreFile("pc-1") },
    error: {
      at: "controlplanes/r1.yaml:6",
      code: "INVALID_FIELD_COMBINATION",
      message: "shared etcd etcd-a",
    },
  },
  {
    name: "a snapshot that names a path",
    edit: { "controlplanes/r1.yaml": restoreFile("pc-1", "../../etc/passwd.db") },
    error: { at: "controlplanes/r1.yaml:7", code: "SCHEMA_VIOLATION", message: "" },
  },
  {
    name: "an upgrade of an unknown cluster",
    edit: { "controlplanes/cve.yaml": upgradeFile("cve", "v1.34.2", "- { name: a, clusters: [pc-9] }") },
    error: {
      at: "controlplanes/cve.yaml:8",
      code: "UNKNOWN_REFERENCE",
      message: 'unknown hosted cluster "pc-9"',
    },
  },
  {
    name: "an upgrade of a cluster that is not hosted",
    edit: { "controlplanes/cve.yaml": upgradeFile("cve", "v1.34.2", "- { name: a, clusters: [meta-1] }") },
    error: {
      at: "controlplanes/cve.yaml:8",
      code: "UNKNOWN_REFERENCE",
      message: 'cluster "meta-1" is not hosted',
    },
  },
  {
    name: "a cluster in two batches",
    edit: {
      "controlplanes/cve.yaml": upgradeFile(
        "cve",
        "v1.34.2",
        "- { name: a, clusters: [pc-1] }\n- { name: b, clusters: [pc-2, pc-1] }",
      ),
    },
    error: {
      at: "controlplanes/cve.yaml:9",
      code: "DUPLICATE_NAME",
      message: "already in upgrade batch cve/a",
    },
  },
  {
    name: "a cluster in two upgrades",
    edit: {
      "controlplanes/cve-a.yaml": upgradeFile("cve-a", "v1.34.2", "- { name: a, clusters: [pc-1] }"),
      "controlplanes/cve-b.yaml": upgradeFile("cve-b", "v1.34.3", "- { name: a, clusters: [pc-1] }"),
    },
    error: {
      at: "controlplanes/cve-b.yaml:8",
      code: "DUPLICATE_NAME",
      message: "already in upgrade batch cve-a/a",
    },
  },
  {
    name: "two batches of one name",
    edit: {
      "controlplanes/cve.yaml": upgradeFile(
        "cve",
        "v1.34.2",
        "- { name: a, clusters: [pc-1] }\n- { name: a, clusters: [pc-2] }",
      ),
    },
    error: { at: "controlplanes/cve.yaml:9", code: "DUPLICATE_NAME", message: 'batch "a" appears twice' },
  },
  {
    name: "an upgrade that skips a minor",
    edit: { "controlplanes/cve.yaml": upgradeFile("cve", "v1.36.0", "- { name: a, clusters: [pc-1] }") },
    error: { at: "controlplanes/cve.yaml:6", code: "INVALID_FIELD_COMBINATION", message: "skips a minor" },
  },
  {
    name: "an upgrade to an older minor",
    edit: { "controlplanes/cve.yaml": upgradeFile("cve", "v1.33.9", "- { name: a, clusters: [pc-1] }") },
    error: {
      at: "controlplanes/cve.yaml:6",
      code: "INVALID_FIELD_COMBINATION",
      message: "cannot go back a minor",
    },
  },
  {
    name: "an upgrade whose version does not parse",
    edit: { "controlplanes/cve.yaml": upgradeFile("cve", "v1.34", "- { name: a, clusters: [pc-1] }") },
    error: { at: "controlplanes/cve.yaml:6", code: "SCHEMA_VIOLATION", message: "" },
  },
  {
    name: "an unknown host",
    edit: { "clusters/pc-1.yaml": replace("host: meta-1", "host: meta-9") },
    error: { at: "clusters/pc-1.yaml:12", code: "UNKNOWN_REFERENCE", message: 'unknown cluster "meta-9"' },
  },
  {
    name: "a cluster hosting itself",
    edit: { "clusters/pc-1.yaml": replace("host: meta-1", "host: pc-1") },
    error: { at: "clusters/pc-1.yaml:12", code: "INVALID_FIELD_COMBINATION", message: "cannot host its own" },
  },
  {
    name: "a hosting cycle",
    edit: {
      "clusters/meta-1.yaml": hostedCluster(
        "meta-1",
        "host: pc-1\nclass: standard\nexpose: { type: LoadBalancer }",
      ),
    },
    error: {
      at: "clusters/meta-1.yaml:7",
      code: "INVALID_FIELD_COMBINATION",
      message: "hosting cycle: meta-1 is hosted by pc-1 is hosted by meta-1",
    },
  },
  {
    name: "an unknown class",
    edit: { "clusters/pc-2.yaml": replace("class: standard", "class: standrd") },
    error: {
      at: "clusters/pc-2.yaml:13",
      code: "UNKNOWN_REFERENCE",
      message: 'unknown ControlPlaneClass "standrd" (did you mean "standard"?)',
    },
  },
  {
    name: "a version that is not a release tag",
    edit: { "controlplanes/standard.yaml": replace("version: v1.34.1", "version: v1.34") },
    error: { at: "controlplanes/standard.yaml:7", code: "SCHEMA_VIOLATION", message: "like v1.32.3" },
  },
  {
    name: "an etcd tag that is not a version",
    edit: { "controlplanes/standard.yaml": replace("version: 3.6.4-0", "version: latest") },
    error: { at: "controlplanes/standard.yaml:17", code: "SCHEMA_VIOLATION", message: "like 3.5.16-0" },
  },
  {
    name: "a controller-manager newer than the API server",
    edit: {
      "controlplanes/standard.yaml": replace(
        "  controllerManager:\n",
        "  controllerManager:\n    version: v1.35.0\n",
      ),
    },
    error: {
      at: "controlplanes/standard.yaml:14",
      code: "INVALID_FIELD_COMBINATION",
      message: "kube-controller-manager v1.35.0: it would be newer than kube-apiserver v1.34.1",
    },
  },
  {
    name: "a scheduler two minors older than the API server",
    edit: {
      "controlplanes/standard.yaml": replace("  etcd:\n", "  scheduler:\n    version: v1.32.9\n  etcd:\n"),
    },
    error: {
      at: "controlplanes/standard.yaml:17",
      code: "INVALID_FIELD_COMBINATION",
      message: "kube-scheduler v1.32.9: it would be 2 minors older than kube-apiserver v1.34.1",
    },
  },
  {
    name: "an API server version apart from the class's",
    edit: {
      "controlplanes/standard.yaml": replace("    replicas: 2\n", "    replicas: 2\n    version: v1.34.0\n"),
    },
    error: {
      at: "controlplanes/standard.yaml:11",
      code: "INVALID_FIELD_COMBINATION",
      message: "set that instead",
    },
  },
  {
    name: "two control planes in one namespace",
    edit: {
      "clusters/pc-1.yaml": replace(
        "    class: standard\n",
        "    class: standard\n    namespace: shared-cp\n",
      ),
      "clusters/pc-2.yaml": replace(
        "    class: standard\n",
        "    class: standard\n    namespace: shared-cp\n",
      ),
    },
    error: {
      at: "clusters/pc-2.yaml:14",
      code: "DUPLICATE_NAME",
      message: "namespace shared-cp already holds the control plane of pc-1",
    },
  },
  {
    name: "a host port without the host node's address",
    edit: {
      "clusters/pc-3.yaml": hostedCluster(
        "pc-3",
        "host: meta-1\nclass: small\nexpose: { type: HostPort, port: 16443 }",
      ),
      "controlplanes/small.yaml": SMALL_CLASS,
    },
    error: {
      at: "clusters/pc-3.yaml:9",
      code: "INVALID_FIELD_COMBINATION",
      message: "expose HostPort needs address",
    },
  },
  {
    name: "host port ranges that overlap on one host",
    edit: {
      "clusters/pc-3.yaml": hostedCluster(
        "pc-3",
        "host: meta-1\nclass: small\nexpose: { type: HostPort, port: 16443, address: 10.0.0.5 }",
      ),
      "clusters/pc-4.yaml": hostedCluster(
        "pc-4",
        "host: meta-1\nclass: small\nexpose: { type: HostPort, port: 16446, address: 10.0.0.5 }",
      ),
      "controlplanes/small.yaml": SMALL_CLASS,
    },
    error: {
      at: "clusters/pc-4.yaml:9",
      code: "DUPLICATE_NAME",
      message:
        "port 16446 (kube-apiserver) of host meta-1 is already taken by kube-controller-manager of pc-3",
    },
  },
  {
    name: "a replicated dedicated etcd on a host port",
    edit: {
      "clusters/pc-3.yaml": hostedCluster(
        "pc-3",
        "host: meta-1\nclass: standard\nexpose: { type: HostPort, port: 16443, address: 10.0.0.5 }",
      ),
    },
    error: { at: "clusters/pc-3.yaml:9", code: "INVALID_FIELD_COMBINATION", message: "asks for 3" },
  },
  {
    // Every member would announce the host node's one address and ports.
    name: "a replicated shared etcd on a host port",
    edit: {
      "clusters/pc-3.yaml": hostedCluster(
        "pc-3",
        "host: meta-1\nclass: standard\netcd: { mode: Shared, name: hp, port: 17000 }\nexpose: { type: HostPort, port: 16443, address: 10.0.0.5 }",
      ),
    },
    error: {
      at: "clusters/pc-3.yaml:10",
      code: "INVALID_FIELD_COMBINATION",
      message: "a shared etcd on a host port runs one member (class standard asks for 3)",
    },
  },
  {
    name: "an etcd member replaced after less than 10s NotReady",
    edit: { "controlplanes/standard.yaml": replace("notReadyFor: 5m", "notReadyFor: 9999ms") },
    error: {
      at: "controlplanes/standard.yaml:25",
      code: "INVALID_FIELD_COMBINATION",
      message: "an etcd member must be NotReady at least 10s before it is replaced (9999ms",
    },
  },
  {
    name: "a node port outside the node port range",
    edit: { "clusters/pc-2.yaml": replace("port: 31443", "port: 8443") },
    error: {
      at: "clusters/pc-2.yaml:19",
      code: "INVALID_FIELD_COMBINATION",
      message: "outside the default node port range",
    },
  },
  {
    name: "a shared etcd used from two hosts",
    edit: {
      "clusters/meta-2.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: meta-2\nspec: {}\n",
      "clusters/pc-2.yaml": replace("host: meta-1", "host: meta-2"),
    },
    error: {
      at: "clusters/pc-2.yaml:15",
      code: "INVALID_FIELD_COMBINATION",
      message: "shared etcd etcd-a is also used by pc-1",
    },
  },
  {
    name: "two clusters with one prefix in a shared etcd",
    edit: {
      "clusters/pc-1.yaml": replace("      name: etcd-a\n", "      name: etcd-a\n      prefix: /prod\n"),
      "clusters/pc-2.yaml": replace("      name: etcd-a\n", "      name: etcd-a\n      prefix: /prod\n"),
    },
    error: { at: "clusters/pc-2.yaml:17", code: "DUPLICATE_NAME", message: "already holds the data of pc-1" },
  },
  {
    name: "nested prefixes in a shared etcd",
    edit: {
      "clusters/pc-1.yaml": replace("      name: etcd-a\n", "      name: etcd-a\n      prefix: /prod\n"),
      "clusters/pc-2.yaml": replace("      name: etcd-a\n", "      name: etcd-a\n      prefix: /prod/b\n"),
    },
    error: {
      at: "clusters/pc-2.yaml:17",
      code: "INVALID_FIELD_COMBINATION",
      message: "prefixes may not nest",
    },
  },
  {
    name: "a shared etcd without a name",
    edit: { "clusters/pc-1.yaml": replace("      name: etcd-a\n", "") },
    error: {
      at: "clusters/pc-1.yaml:15",
      code: "INVALID_FIELD_COMBINATION",
      message: "a shared etcd needs a name",
    },
  },
  {
    name: "a prefix on a dedicated etcd",
    edit: {
      "clusters/pc-1.yaml": replace(
        "mode: Shared\n      name: etcd-a",
        "mode: Dedicated\n      prefix: /pc-1",
      ),
    },
    error: {
      at: "clusters/pc-1.yaml:16",
      code: "INVALID_FIELD_COMBINATION",
      message: "etcd.prefix applies to a Shared etcd only",
    },
  },
  {
    name: "a hosted cluster with a kubeconfig of its own",
    edit: {
      "clusters/pc-1.yaml": replace(
        "  controlPlane:\n",
        "  connection:\n    kubeconfigFile: pc-1.yaml\n  controlPlane:\n",
      ),
    },
    error: {
      at: "clusters/pc-1.yaml:12",
      code: "INVALID_FIELD_COMBINATION",
      message: "remove connection.kubeconfigFile",
    },
  },
  {
    name: "connection mode hosted without a control plane",
    edit: {
      "clusters/meta-1.yaml": replace(
        "  region: us-east\n",
        "  region: us-east\n  connection:\n    mode: hosted\n",
      ),
    },
    error: {
      at: "clusters/meta-1.yaml:12",
      code: "INVALID_FIELD_COMBINATION",
      message: "needs spec.controlPlane",
    },
  },
  {
    name: "a host reached in pull mode",
    edit: {
      "clusters/meta-1.yaml": replace(
        "  region: us-east\n",
        "  region: us-east\n  connection:\n    mode: pull\n",
      ),
    },
    error: {
      at: "clusters/pc-1.yaml:12",
      code: "INVALID_FIELD_COMBINATION",
      message: "host meta-1 is reached in pull mode",
    },
  },
  {
    name: "a Placement selecting a generated app",
    edit: { "placements/web.yaml": replace("apps: [web]", "apps: [web, gitfleet-cp-pc-1]") },
    error: {
      at: "placements/web.yaml:7",
      code: "INVALID_FIELD_COMBINATION",
      message: "a Placement may not select it",
    },
  },
  {
    name: "an app named like a generated one",
    edit: { "apps/gitfleet-cp-pc-1/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n" },
    error: {
      at: "clusters/pc-1.yaml:5",
      code: "DUPLICATE_NAME",
      message: "apps/gitfleet-cp-pc-1/ uses the name",
    },
  },
  {
    name: "a hosted cluster whose generated app name is too long",
    edit: {
      "clusters/a-very-long-hosted-cluster-name-for-the-limit-abcdef.yaml": hostedCluster(
        "a-very-long-hosted-cluster-name-for-the-limit-abcdef",
        "host: meta-1\nclass: standard\nexpose: { type: LoadBalancer }",
      ),
    },
    error: {
      at: "clusters/a-very-long-hosted-cluster-name-for-the-limit-abcdef.yaml:4",
      code: "INVALID_NAME",
      message: "longer than 63 characters",
    },
  },
  ...nodePoolCases(),
];

// pc-2's node pool (line 24 of the example's file is its name) changed one field at a time.
function nodePoolCases(): Case[] {
  const pool = (line: string, to: string): Edit => ({ "clusters/pc-2.yaml": replace(line, to) });
  const at = (line: number) => `clusters/pc-2.yaml:${line}`;
  return [
    {
      name: "two node pools of one name",
      edit: pool(
        "        repair: { notReadyFor: 5m, maxUnhealthy: 40% }\n",
        "        repair: { notReadyFor: 5m, maxUnhealthy: 40% }\n      - { name: workers, replicas: 1 }\n",
      ),
      error: { at: at(30), code: "DUPLICATE_NAME", message: 'node pool "workers" is defined twice' },
    },
    {
      name: "a node label the NodeRestriction plugin refuses",
      edit: pool("{ tier: general }", "{ node-role.kubernetes.io/worker: '' }"),
      error: {
        at: at(26),
        code: "INVALID_FIELD_COMBINATION",
        message: "a kubelet may not set labels under node-role.kubernetes.io",
      },
    },
    {
      name: "a join token that lives less than 10s",
      edit: pool("tokenTTL: 12h", "tokenTTL: 9s"),
      error: { at: at(27), code: "INVALID_FIELD_COMBINATION", message: "at least 10s" },
    },
    {
      name: "a node removed for repair after less than 10s NotReady",
      edit: pool("notReadyFor: 5m", "notReadyFor: 9s"),
      error: { at: at(29), code: "INVALID_FIELD_COMBINATION", message: "NotReady at least 10s" },
    },
    {
      name: "no node of a pool ever allowed to upgrade",
      edit: pool("maxUnavailable: 1,", "maxUnavailable: 0,"),
      error: { at: at(28), code: "SCHEMA_VIOLATION", message: "must be at least 1" },
    },
    {
      name: "a kubelet newer than the API server",
      edit: pool("replicas: 3\n", "replicas: 3\n        kubeletVersion: v1.34.2\n"),
      error: {
        at: at(26),
        code: "INVALID_FIELD_COMBINATION",
        message: "a kubelet is never newer than the API server",
      },
    },
    {
      name: "a kubelet four minors behind the API server",
      edit: pool("replicas: 3\n", "replicas: 3\n        kubeletVersion: v1.30.9\n"),
      error: {
        at: at(26),
        code: "INVALID_FIELD_COMBINATION",
        message: "4 minors older than kube-apiserver v1.34.1",
      },
    },
    {
      name: "an upgrade that would leave a pool four minors behind",
      edit: {
        ...pool("replicas: 3\n", "replicas: 3\n        kubeletVersion: v1.32.0\n"),
        "controlplanes/small.yaml": SMALL_CLASS.replace("v1.34.1", "v1.35.1"),
        "clusters/pc-2.yaml": (text: string) =>
          replace(
            "class: standard",
            "class: small",
          )(replace("replicas: 3\n", "replicas: 3\n        kubeletVersion: v1.32.0\n")(text)),
        "controlplanes/cve.yaml": upgradeFile("cve", "v1.36.1", "- { name: a, clusters: [pc-2] }"),
      },
      error: {
        at: at(26),
        code: "INVALID_FIELD_COMBINATION",
        message: "against ControlPlaneUpgrade cve (v1.36.1): it would be 4 minors older",
      },
    },
  ];
}

describe("hosted control planes: validation", () => {
  it.each([
    ["100.0.0.0/8", 3],
    ["10.244.0.0/22", 4],
    ["10.88.0.0/13", 3],
    ["10.112.0.0/12", 3],
  ] as const)("accepts a pod range %s beside the Service range for %i nodes", (podCIDR, replicas) => {
    const result = loadFleet(edited({ ...withCni(podCIDR), ...(replicas === 3 ? {} : workers(replicas)) }));
    expect(result.problems.filter((p) => p.severity === "error")).toEqual([]);
    const plane = resolveControlPlanes(result.model as FleetModel).find(
      (e) => e.plane.cluster === "pc-2",
    )?.plane;
    expect(plane?.cni).toEqual({
      plugin: "flannel",
      podCIDR,
      backend: "vxlan",
      registry: "ghcr.io/flannel-io",
      version: "v0.26.7",
      pluginVersion: "v1.6.2-flannel1",
    });
    expect(plane?.kubeProxy).toEqual({ mode: "nftables" });
  });

  it("moves a dedicated etcd with its upgrade batch: a patch that may roll back, or a minor that may not", () => {
    for (const [etcd, batches] of [
      ["3.6.5-0", "- { name: a, clusters: [pc-3], rollback: true }"],
      ["3.6.4-0", "- { name: a, clusters: [pc-3], rollback: true }"],
      ["3.7.0-0", "- { name: a, clusters: [pc-3] }"],
    ] as const) {
      const result = loadFleet(
        edited({
          "clusters/pc-3.yaml": REPLICATED_PC3,
          "controlplanes/cve.yaml": etcdUpgrade(etcd, batches),
        }),
      );
      expect(result.problems.filter((p) => p.severity === "error")).toEqual([]);
      const model = result.model as FleetModel;
      const etcdOf = (versions: ReadonlyMap<string, string>) =>
        resolveControlPlanes(model, undefined, { versions, restores: new Map() }).find(
          (e) => e.plane.cluster === "pc-3",
        )?.plane.etcd.version;
      // Its batch started: the upgrade's etcd; not started (or rolled back): the class's.
      expect(etcdOf(new Map([["pc-3", "v1.34.2"]]))).toBe(etcd);
      expect(etcdOf(new Map())).toBe("3.6.4-0");
    }
  });

  it("accepts an etcd member replaced after exactly 10s NotReady, and repair turned off", () => {
    for (const repair of ["notReadyFor: 10s", "enabled: false"]) {
      const result = loadFleet(edited({ "controlplanes/standard.yaml": replace("notReadyFor: 5m", repair) }));
      expect(result.problems.filter((p) => p.severity === "error")).toEqual([]);
    }
  });

  it("accepts a restore of a replicated dedicated etcd with a name of 48 characters", () => {
    const result = loadFleet(
      edited({ "clusters/pc-3.yaml": REPLICATED_PC3, "controlplanes/r1.yaml": namedRestore("r".repeat(48)) }),
    );
    expect(result.problems.filter((p) => p.severity === "error")).toEqual([]);
  });

  it("accepts an etcd quota from 16Mi to 8Gi, resolved to the bytes --quota-backend-bytes takes", () => {
    for (const [quota, bytes] of [
      ["16Mi", "16777216"],
      ["8Gi", "8589934592"],
      ["2G", "2000000000"],
    ] as const) {
      const result = loadFleet(edited({ "controlplanes/standard.yaml": withQuota(quota) }));
      expect(result.problems.filter((p) => p.severity === "error")).toEqual([]);
      expect(result.model?.controlPlaneClasses[0]?.spec.etcd.quota).toBe(quota);
      const etcd = resolveControlPlanes(result.model as FleetModel)[0]?.plane.etcd;
      expect(etcd?.quotaBytes).toBe(Number(bytes));
    }
  });

  it("accepts a member replacement of a dedicated and of a shared etcd's members, first and last", () => {
    for (const [cluster, member] of [
      ["pc-3", "etcd-0"],
      ["pc-3", "etcd-2"],
      ["pc-1", "etcd-a-0"],
      ["pc-2", "etcd-a-2"],
    ] as const) {
      const result = loadFleet(
        edited({
          "clusters/pc-3.yaml": REPLICATED_PC3,
          "controlplanes/swap.yaml": replacementFile(cluster, member),
        }),
      );
      expect(result.problems.filter((p) => p.severity === "error")).toEqual([]);
      expect(result.model?.etcdMemberReplacements.map((r) => r.spec)).toEqual([{ cluster, member }]);
    }
  });

  it("accepts the documented example", () => {
    const result = loadFleet(example);
    expect(result.problems).toEqual([]);
    expect(result.model?.clusters.map((c) => c.metadata.name)).toEqual(["meta-1", "pc-1", "pc-2"]);
  });

  it.each(CASES)("refuses $name at file:line with a reason", ({ edit, error }) => {
    const result = loadFleet(edited(edit));
    expect(result.model).toBeUndefined();
    const found = result.problems
      .filter((p) => p.severity === "error")
      .map((p) => `${p.file}:${p.line} ${p.code} ${p.message}`);
    expect(found, found.join("\n")).toContainEqual(expect.stringContaining(`${error.at} ${error.code}`));
    const matching = result.problems.filter(
      (p) => `${p.file}:${p.line}` === error.at && p.code === error.code && p.message.includes(error.message),
    );
    expect(matching, found.join("\n")).toHaveLength(1);
  });

  it.each([
    ["three minors behind", "v1.31.0"],
    ["the API server's own version", "v1.34.1"],
    ["an older patch of the same minor", "v1.34.0"],
  ])(
    "accepts a node pool whose kubelet is %s (%s), a join token of exactly 10s and repair after exactly 10s",
    (_name, version) => {
      const result = loadFleet(
        edited({
          "clusters/pc-2.yaml": (text: string) =>
            replace(
              "notReadyFor: 5m",
              "notReadyFor: 10s",
            )(
              replace(
                "tokenTTL: 12h",
                "tokenTTL: 10s",
              )(replace("replicas: 3\n", `replicas: 3\n        kubeletVersion: ${version}\n`)(text)),
            ),
        }),
      );
      expect(result.problems.filter((p) => p.severity === "error")).toEqual([]);
    },
  );

  it.each<[string, string | undefined, string, boolean]>([
    ["just under twice the default driftInterval (5m)", undefined, "599s", true],
    ["exactly twice the default driftInterval", undefined, "10m", false],
    ["just under twice a driftInterval of 1m", "1m", "119s", true],
    ["exactly twice a driftInterval of 1m", "1m", "2m", false],
    ["well above it", "1m", "13h", false],
  ])("warns of join tokens that outlive no host sync: %s", (_name, drift, ttl, warned) => {
    const result = loadFleet(
      edited({
        "clusters/pc-2.yaml": replace("tokenTTL: 12h", `tokenTTL: ${ttl}`),
        ...(drift === undefined
          ? {}
          : { "fleet.yaml": (text: string) => `${text.trimEnd()}\n  driftInterval: ${drift}\n` }),
      }),
    );
    expect(result.problems.filter((p) => p.severity === "error")).toEqual([]);
    const warnings = result.problems.filter(
      (p) => p.severity === "warning" && p.message.includes("join tokens are renewed when the host syncs"),
    );
    expect(warnings.map((p) => `${p.file}:${p.line}`)).toEqual(warned ? ["clusters/pc-2.yaml:27"] : []);
  });

  it("accepts a component one minor behind the API server, a chain of hosts and disjoint host ports", () => {
    const result = loadFleet(
      edited({
        "controlplanes/standard.yaml": replace(
          "  controllerManager:\n",
          "  controllerManager:\n    version: v1.33.7\n",
        ),
        "controlplanes/small.yaml": SMALL_CLASS,
        "clusters/pc-3.yaml": hostedCluster(
          "pc-3",
          "host: pc-1\nclass: small\nexpose: { type: HostPort, port: 16443, address: 10.0.0.5 }",
        ),
        "clusters/pc-4.yaml": hostedCluster(
          "pc-4",
          "host: pc-1\nclass: small\nexpose: { type: HostPort, port: 16449, address: 10.0.0.5 }",
        ),
      }),
    );
    expect(result.problems.filter((p) => p.severity === "error")).toEqual([]);
  });
});
