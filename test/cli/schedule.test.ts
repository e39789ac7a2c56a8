import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/** `gitfleet schedule` as a user runs it: JSON on stdin, JSON on stdout, exit 0 / 3 / 1. */
const root = fileURLToPath(new URL("../..", import.meta.url));

function schedule(input: string) {
  const result = spawnSync(process.execPath, [join(root, "bin/gitfleet.js"), "schedule"], {
    input,
    encoding: "utf8",
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const weighted = {
  replicaScheduling: {
    type: "Divided",
    weightPreference: {
      staticWeightList: [
        { targetCluster: { clusterNames: ["a"] }, weight: 3 },
        { targetCluster: { clusterNames: ["b"] }, weight: 2 },
        { targetCluster: { clusterNames: ["c"] }, weight: 1 },
      ],
    },
  },
};

describe("gitfleet schedule", () => {
  it("prints the decision and exits 0 when every replica is placed", () => {
    const { code, stdout } = schedule(
      JSON.stringify({
        replicas: 12,
        placement: weighted,
        clusters: [{ name: "a" }, { name: "b" }, { name: "c" }],
      }),
    );
    expect(JSON.parse(stdout)).toMatchObject({
      clusters: { a: 6, b: 4, c: 2 },
      unschedulable: 0,
      diagnosis: { summary: "3/3 clusters available" },
    });
    expect(code).toBe(0);
  });

  it("exits 3 and still says what was placed when some replicas are unschedulable", () => {
    const input = {
      workload: {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web", uid: "u-1" },
        spec: { template: { spec: { containers: [{ name: "w", resources: { requests: { cpu: "1" } } }] } } },
      },
      replicas: 10,
      placement: {
        replicaScheduling: { type: "Divided", weightPreference: { dynamicWeight: "AvailableReplicas" } },
      },
      clusters: [
        { name: "a", nodes: [{ allocatable: { cpu: "4", pods: 110 }, requested: { cpu: "1" } }] },
        { name: "b", availableReplicas: 2 },
        { name: "c", taints: [{ key: "gpu", effect: "NoSchedule" }] },
      ],
    };
    const { code, stdout } = schedule(JSON.stringify(input));
    const decision = JSON.parse(stdout);
    expect(decision.clusters).toEqual({ a: 3, b: 2 });
    expect(decision.unschedulable).toBe(5);
    expect(decision.diagnosis.filtered).toEqual({ c: "untolerated taint {gpu:NoSchedule}" });
    expect(code).toBe(3);
  });

  it.each([
    [
      "a schema violation, with line and column",
      '{\n  "replicas": 3,\n  "placement": {"replicaScheduling": {"type": "Divid"}},\n  "clusters": []\n}',
      '<stdin>:3:47: error: /placement/replicaScheduling/type: must be one of Duplicated, Divided (got "Divid") [SCHEMA_VIOLATION]',
    ],
    ["broken JSON", '{"replicas": 3,', "<stdin>:1:16: error: YAML:"],
    [
      "a duplicate cluster",
      '{"replicas": 1, "placement": {}, "clusters": [{"name": "a"}, {"name": "a"}]}',
      '<stdin>: cluster "a" is listed twice',
    ],
    [
      "a missing field",
      '{"placement": {}, "clusters": []}',
      '<stdin>:1:1: error: /replicas: missing required field "replicas" [MISSING_FIELD]',
    ],
  ])("exits 1 on %s", (_name, input, message) => {
    const { code, stderr, stdout } = schedule(input);
    expect(stderr).toContain("gitfleet: invalid scheduling problem:");
    expect(stderr).toContain(message);
    expect(stdout).toBe("");
    expect(code).toBe(1);
  });
});

describe("the README's example", () => {
  it("gives the decision the README shows", () => {
    const input = readFileSync(join(root, "docs/examples/schedule-problem.json"), "utf8");
    const { code, stdout } = schedule(input);
    expect(JSON.parse(stdout)).toEqual({
      clusters: { "aws-use1": 4, "idc-east-1": 8 },
      unschedulable: 0,
      diagnosis: {
        summary: "2/3 clusters available: 1 untolerated taint {gpu=true:NoSchedule}",
        filtered: { "gcp-euw1": "untolerated taint {gpu=true:NoSchedule}" },
        frozen: {},
        notSelected: {},
        selected: ["aws-use1", "idc-east-1"],
        room: { "aws-use1": { holds: 20, by: "capacity" }, "idc-east-1": { holds: 11, by: "cpu" } },
      },
    });
    expect(code).toBe(0);
  });
});
