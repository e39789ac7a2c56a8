import { describe, expect, it } from "vitest";
import type { JsonMap } from "../../src/apimachinery/json.js";
import { BUILT_IN_PRINTERS, DEFAULT_PRINTER } from "../../src/sim/printers/built-in-printers.js";
import { customResourcePrinter } from "../../src/sim/printers/custom-printers.js";
import { humanDuration } from "../../src/sim/printers/human-duration.js";
import { evaluateJsonPath } from "../../src/sim/printers/json-path.js";
import { podCells } from "../../src/sim/printers/pod-row.js";
import { formatLabelSelector, formatLabels } from "../../src/sim/printers/selector-text.js";

/** The API server's printers, as kube-apiserver v1.36 prints (pkg/printers/internalversion). */
const NOW = new Date("2026-12-01T12:00:00Z");
const ago = (seconds: number) => new Date(NOW.getTime() - seconds * 1000).toISOString().replace(".000Z", "Z");

describe("human durations", () => {
  it.each([
    [-3000, "<invalid>"],
    [-1500, "0s"],
    [0, "0s"],
    [1500, "1s"],
    [119_000, "119s"],
    [120_000, "2m"],
    [125_000, "2m5s"],
    [600_000, "10m"],
    [179 * 60_000, "179m"],
    [3 * 3_600_000, "3h"],
    [3 * 3_600_000 + 5 * 60_000, "3h5m"],
    [8 * 3_600_000 + 5 * 60_000, "8h"],
    [47 * 3_600_000, "47h"],
    [48 * 3_600_000, "2d"],
    [50 * 3_600_000, "2d2h"],
    [8 * 86_400_000, "8d"],
    [729 * 86_400_000, "729d"],
    [730 * 86_400_000, "2y"],
    [740 * 86_400_000, "2y10d"],
    [9 * 365 * 86_400_000, "9y"],
  ])("%d ms is %s", (ms, text) => {
    expect(humanDuration(ms)).toBe(text);
  });
});

describe("selectors as text", () => {
  it.each([
    [{}, "<none>"],
    [{ matchLabels: { tier: "web", app: "shop" } }, "app=shop,tier=web"],
    [
      {
        matchLabels: { app: "shop" },
        matchExpressions: [
          { key: "zone", operator: "In", values: ["b", "a"] },
          { key: "env", operator: "NotIn", values: ["dev"] },
          { key: "canary", operator: "Exists" },
          { key: "legacy", operator: "DoesNotExist" },
        ],
      },
      "app=shop,canary,env notin (dev),!legacy,zone in (a,b)",
    ],
  ])("%j is %s", (selector, text) => {
    expect(formatLabelSelector(selector)).toBe(text);
  });

  it("writes label maps sorted, <none> when empty", () => {
    expect(formatLabels({ b: "2", a: "1" })).toBe("a=1,b=2");
    expect(formatLabels(undefined)).toBe("<none>");
  });
});

const container = (state: JsonMap, extra: JsonMap = {}) => ({
  name: "main",
  ready: false,
  restartCount: 0,
  state,
  ...extra,
});
const pod = (status: JsonMap, spec: JsonMap = {}, metadata: JsonMap = {}): JsonMap => ({
  metadata: { name: "web-1", creationTimestamp: ago(300), ...metadata },
  spec: { containers: [{ name: "main" }], nodeName: "east-node-0", ...spec },
  status,
});

describe("pod rows", () => {
  it.each<[string, JsonMap, string[]]>([
    [
      "running and ready",
      pod({
        phase: "Running",
        podIPs: [{ ip: "10.0.0.7" }],
        conditions: [{ type: "Ready", status: "True" }],
        containerStatuses: [container({ running: { startedAt: ago(290) } }, { ready: true })],
      }),
      ["web-1", "1/1", "Running", "0", "5m", "10.0.0.7", "east-node-0", "<none>", "<none>"],
    ],
    [
      "crash looping, restarted two minutes ago",
      pod({
        phase: "Running",
        containerStatuses: [
          container(
            { waiting: { reason: "CrashLoopBackOff" } },
            { restartCount: 3, lastState: { terminated: { exitCode: 1, finishedAt: ago(125) } } },
          ),
        ],
      }),
      ["web-1", "0/1", "CrashLoopBackOff", "3 (2m5s ago)", "5m"],
    ],
    [
      "waiting to pull",
      pod({ phase: "Pending", containerStatuses: [container({ waiting: { reason: "ImagePullBackOff" } })] }),
      ["web-1", "0/1", "ImagePullBackOff", "0", "5m"],
    ],
    [
      "a job's pod done",
      pod({
        phase: "Succeeded",
        containerStatuses: [container({ terminated: { exitCode: 0, reason: "Completed" } })],
      }),
      ["web-1", "0/1", "Completed", "0", "5m"],
    ],
    [
      "failed with a code",
      pod({ phase: "Failed", containerStatuses: [container({ terminated: { exitCode: 2 } })] }),
      ["web-1", "0/1", "ExitCode:2", "0", "5m"],
    ],
    [
      "initializing, the first of two init containers running",
      pod(
        {
          phase: "Pending",
          initContainerStatuses: [
            container({ running: {} }, { name: "setup" }),
            container({ waiting: { reason: "PodInitializing" } }, { name: "seed" }),
          ],
        },
        { initContainers: [{ name: "setup" }, { name: "seed" }] },
      ),
      ["web-1", "0/1", "Init:0/2", "0", "5m"],
    ],
    [
      "an init container that cannot pull",
      pod(
        {
          phase: "Pending",
          initContainerStatuses: [container({ waiting: { reason: "ErrImagePull" } }, { name: "setup" })],
        },
        { initContainers: [{ name: "setup" }] },
      ),
      ["web-1", "0/1", "Init:ErrImagePull", "0", "5m"],
    ],
    [
      "a started sidecar counts among the containers",
      pod(
        {
          phase: "Running",
          conditions: [
            { type: "Initialized", status: "True" },
            { type: "Ready", status: "True" },
          ],
          initContainerStatuses: [container({ running: {} }, { name: "proxy", started: true, ready: true })],
          containerStatuses: [container({ running: {} }, { ready: true })],
        },
        { initContainers: [{ name: "proxy", restartPolicy: "Always" }] },
      ),
      ["web-1", "2/2", "Running", "0", "5m"],
    ],
    [
      "being deleted",
      pod({ phase: "Running" }, {}, { deletionTimestamp: ago(1) }),
      ["web-1", "0/1", "Terminating", "0", "5m"],
    ],
    [
      "on a lost node",
      pod({ phase: "Running", reason: "NodeLost" }, {}, { deletionTimestamp: ago(1) }),
      ["web-1", "0/1", "Unknown", "0", "5m"],
    ],
    [
      "not yet scheduled",
      {
        metadata: { name: "web-1", creationTimestamp: ago(300) },
        spec: { containers: [{ name: "main" }] },
        status: { phase: "Pending" },
      },
      ["web-1", "0/1", "Pending", "0", "5m", "<none>", "<none>"],
    ],
  ])("%s", (_what, object, cells) => {
    expect(podCells(object, NOW).slice(0, cells.length)).toEqual(cells);
  });
});

describe("built-in printers", () => {
  const header = (kind: string) =>
    (BUILT_IN_PRINTERS.get(kind)?.columns ?? []).map((c) => (c.priority ? `(${c.name})` : c.name));

  it.each([
    [
      "/Pod",
      [
        "Name",
        "Ready",
        "Status",
        "Restarts",
        "Age",
        "(IP)",
        "(Node)",
        "(Nominated Node)",
        "(Readiness Gates)",
      ],
    ],
    [
      "apps/Deployment",
      ["Name", "Ready", "Up-to-date", "Available", "Age", "(Containers)", "(Images)", "(Selector)"],
    ],
    ["/Service", ["Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "(Selector)"]],
    [
      "/Event",
      [
        "Last Seen",
        "Type",
        "Reason",
        "Object",
        "(Subobject)",
        "(Source)",
        "Message",
        "(First Seen)",
        "(Count)",
        "(Name)",
      ],
    ],
    [
      "/Node",
      [
        "Name",
        "Status",
        "Roles",
        "Age",
        "Version",
        "(Internal-IP)",
        "(External-IP)",
        "(OS-Image)",
        "(Kernel-Version)",
        "(Container-Runtime)",
      ],
    ],
    [
      "batch/CronJob",
      [
        "Name",
        "Schedule",
        "Timezone",
        "Suspend",
        "Active",
        "Last Schedule",
        "Age",
        "(Containers)",
        "(Images)",
        "(Selector)",
      ],
    ],
  ])("%s has the API server's columns", (kind, columns) => {
    expect(header(kind)).toEqual(columns);
  });

  it("gives as many cells as columns for every kind, even for an empty object", () => {
    for (const [kind, printer] of BUILT_IN_PRINTERS)
      expect([kind, printer.cells({}, NOW).length]).toEqual([kind, printer.columns.length]);
    expect(DEFAULT_PRINTER.cells({ metadata: { name: "x", creationTimestamp: ago(5) } }, NOW)).toEqual([
      "x",
      ago(5),
    ]);
  });

  it.each<[string, JsonMap, unknown[]]>([
    [
      "apps/Deployment",
      {
        metadata: { name: "web", creationTimestamp: ago(60) },
        spec: {
          replicas: 3,
          selector: { matchLabels: { app: "web" } },
          template: {
            spec: {
              containers: [
                { name: "a", image: "i:1" },
                { name: "b", image: "j:2" },
              ],
            },
          },
        },
        status: { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 },
      },
      ["web", "2/3", 3, 2, "60s", "a,b", "i:1,j:2", "app=web"],
    ],
    [
      "/Service",
      {
        metadata: { name: "lb", creationTimestamp: ago(60) },
        spec: {
          type: "LoadBalancer",
          clusterIPs: ["10.96.0.10"],
          ports: [
            { port: 80, nodePort: 30080, protocol: "TCP" },
            { port: 53, protocol: "UDP" },
          ],
          selector: { app: "lb" },
        },
      },
      ["lb", "LoadBalancer", "10.96.0.10", "<pending>", "80:30080/TCP,53/UDP", "60s", "app=lb"],
    ],
    [
      "/Event",
      {
        metadata: { name: "web-1.1" },
        involvedObject: { kind: "Pod", name: "web-1", fieldPath: "spec.containers{main}" },
        reason: "BackOff",
        type: "Warning",
        message: "Back-off restarting failed container ",
        count: 4,
        firstTimestamp: ago(600),
        lastTimestamp: ago(30),
        source: { component: "kubelet", host: "east-node-0" },
      },
      [
        "30s",
        "Warning",
        "BackOff",
        "pod/web-1",
        "spec.containers{main}",
        "kubelet, east-node-0",
        "Back-off restarting failed container",
        "10m",
        4,
        "web-1.1",
      ],
    ],
    [
      "batch/Job",
      {
        metadata: { name: "once", creationTimestamp: ago(100) },
        spec: { completions: 3, template: { spec: { containers: [] } } },
        status: {
          succeeded: 3,
          startTime: ago(100),
          completionTime: ago(40),
          conditions: [{ type: "Complete", status: "True" }],
        },
      },
      ["once", "Complete", "3/3", "60s", "100s", "", "", "<none>"],
    ],
    [
      "autoscaling/HorizontalPodAutoscaler",
      {
        metadata: { name: "web", creationTimestamp: ago(5) },
        spec: {
          scaleTargetRef: { kind: "Deployment", name: "web" },
          minReplicas: 2,
          maxReplicas: 10,
          metrics: [
            {
              type: "Resource",
              resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 80 } },
            },
          ],
        },
        status: {
          currentReplicas: 2,
          currentMetrics: [
            { type: "Resource", resource: { name: "cpu", current: { averageUtilization: 41 } } },
          ],
        },
      },
      ["web", "Deployment/web", "cpu: 41%/80%", "2", 10, 2, "5s"],
    ],
    [
      "/Endpoints",
      {
        metadata: { name: "web", creationTimestamp: ago(5) },
        subsets: [
          { addresses: [{ ip: "10.0.0.1" }, { ip: "10.0.0.2" }], ports: [{ port: 80 }, { port: 443 }] },
        ],
      },
      ["web", "10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more...", "5s"],
    ],
  ])("%s cells", (kind, object, cells) => {
    expect(BUILT_IN_PRINTERS.get(kind)?.cells(object, NOW)).toEqual(cells);
  });
});

describe("JSONPath of printer columns", () => {
  const widget = {
    metadata: { name: "w", labels: { "app.kubernetes.io/name": "shop" } },
    spec: { replicas: 3, sizes: [1, 2, 3] },
    status: {
      conditions: [
        { type: "Synced", status: "True" },
        { type: "Ready", status: "False", reason: "Waiting" },
      ],
    },
  };
  it.each([
    [".spec.replicas", [3]],
    [".spec.sizes[-1]", [3]],
    [".spec.sizes[*]", [1, 2, 3]],
    [".metadata.labels['app.kubernetes.io/name']", ["shop"]],
    ['.status.conditions[?(@.type=="Ready")].status', ["False"]],
    ['.status.conditions[?(@.type=="Gone")].status', []],
    [".spec.missing.deeper", []],
    [".spec..bad", []],
  ])("%s", (path, values) => {
    expect(evaluateJsonPath(path, widget)).toEqual(values);
  });
});

describe("custom resource printers", () => {
  const crd = (columns?: JsonMap[]): JsonMap => ({
    spec: {
      versions: [{ name: "v1", served: true, ...(columns ? { additionalPrinterColumns: columns } : {}) }],
    },
  });
  it("prints a CRD's additionalPrinterColumns with typed cells", () => {
    const printer = customResourcePrinter(
      crd([
        { name: "Ready", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
        { name: "Replicas", type: "integer", jsonPath: ".spec.replicas" },
        { name: "Paused", type: "boolean", jsonPath: ".spec.paused", priority: 1 },
        { name: "Since", type: "date", jsonPath: ".status.since" },
      ]),
      "v1",
    );
    expect(printer.columns.map((c) => [c.name, c.type, c.priority ?? 0])).toEqual([
      ["Name", "string", 0],
      ["Ready", "string", 0],
      ["Replicas", "integer", 0],
      ["Paused", "boolean", 1],
      ["Since", "date", 0],
    ]);
    const object = {
      metadata: { name: "w" },
      spec: { replicas: "three" },
      status: { conditions: [{ type: "Ready", status: "True" }], since: ago(90) },
    };
    expect(printer.cells(object, NOW)).toEqual(["w", "True", null, null, "90s"]);
  });

  it("prints NAME and AGE for a CRD without columns", () => {
    const printer = customResourcePrinter(crd(), "v1");
    expect(printer.columns.map((c) => c.name)).toEqual(["Name", "Age"]);
    expect(printer.cells({ metadata: { name: "w", creationTimestamp: ago(7) } }, NOW)).toEqual(["w", "7s"]);
  });
});
