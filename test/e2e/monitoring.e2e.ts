import { execFileSync, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { FleetMetrics } from "../../src/metrics/fleet-metrics.js";
import { tempDir } from "../helpers/git-repo.js";
import { helm, helmBinary } from "../helpers/helm.js";

/**
 * The chart's alerts and Grafana dashboard asked of Prometheus' own PromQL parser (built from the Go
 * module by test/e2e/prometheus/build.sh): every query parses, every metric it selects is one the
 * controller exports, and every label it matches or groups by is one of those metrics' labels.
 */
const BUILD = fileURLToPath(new URL("./prometheus/build.sh", import.meta.url));
const CHART = fileURLToPath(new URL("../../charts/gitfleet", import.meta.url));

interface Parsed {
  expr: string;
  error?: string;
  metrics: string[];
  labels: string[];
}

let promql: string;
let home: { dir: string; cleanup: () => void };

beforeAll(() => {
  const dir = execFileSync("bash", [BUILD], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] })
    .trim()
    .split("\n")
    .pop() as string;
  promql = `${dir}/promql`;
  home = tempDir("gitfleet-e2e-monitoring-");
});

afterAll(() => home?.cleanup());

function parse(queries: readonly string[]): Parsed[] {
  const answer = spawnSync(promql, [], {
    input: queries.map((q) => JSON.stringify(q)).join("\n"),
    encoding: "utf8",
  });
  expect(answer.stderr).toBe("");
  return answer.stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Parsed);
}

/** Each exported series name with its label names (a histogram's _bucket also has `le`). */
function exportedSeries(): Map<string, Set<string>> {
  const metrics = new FleetMetrics(() => ({
    ready: true,
    leading: true,
    clusters: new Map(),
    synced: new Map(),
    decisions: [],
  }));
  const series = new Map<string, Set<string>>();
  for (const metric of metrics.registry.getMetricsAsArray()) {
    const { name, labelNames = [] } = metric as unknown as { name: string; labelNames?: string[] };
    if (String((metric as unknown as { type: string }).type) === "histogram") {
      series.set(`${name}_bucket`, new Set([...labelNames, "le"]));
      series.set(`${name}_sum`, new Set(labelNames));
      series.set(`${name}_count`, new Set(labelNames));
    } else series.set(name, new Set(labelNames));
  }
  return series;
}

/** What is wrong with one parsed query against the exported series: nothing when it is right. */
function problems(parsed: Parsed, series: Map<string, Set<string>>): string[] {
  if (parsed.error) return [`${parsed.expr}: ${parsed.error}`];
  const unknownMetrics = parsed.metrics.filter((name) => !series.has(name));
  const known = new Set(parsed.metrics.flatMap((name) => [...(series.get(name) ?? [])]));
  const unknownLabels = parsed.labels.filter((label) => !known.has(label));
  return [
    ...unknownMetrics.map((name) => `${parsed.expr}: no metric ${name}`),
    ...unknownLabels.map((label) => `${parsed.expr}: no label ${label} on ${parsed.metrics.join(", ")}`),
  ];
}

async function chartQueries(): Promise<string[]> {
  const text = await helm(helmBinary(), home.dir, [
    "template",
    "gitfleet",
    CHART,
    "--set",
    "repo.url=https://git.example.com/fleet.git",
    "--set",
    "prometheusRule.enabled=true",
    "--set",
    "grafanaDashboard.enabled=true",
  ]);
  const docs = parseAllDocuments(text).map((d) => d.toJS() as Record<string, unknown>);
  const rule = docs.find((d) => d?.kind === "PrometheusRule") as {
    spec: { groups: { rules: { expr: string }[] }[] };
  };
  const dashboard = docs.find(
    (d) =>
      d?.kind === "ConfigMap" &&
      String(d.metadata && (d.metadata as { name: string }).name).endsWith("-dashboard"),
  ) as {
    data: Record<string, string>;
  };
  const panels = (
    JSON.parse(dashboard.data["gitfleet.json"] ?? "{}") as { panels: { targets: { expr: string }[] }[] }
  ).panels;
  return [
    ...rule.spec.groups.flatMap((g) => g.rules.map((r) => r.expr)),
    ...panels.flatMap((p) => p.targets.map((t) => t.expr)),
  ];
}

describe("the chart's monitoring queries, by Prometheus' parser", () => {
  it("every alert and dashboard query parses and names only exported metrics and their labels", async () => {
    const queries = await chartQueries();
    expect(queries.length).toBeGreaterThan(20);
    const parsed = parse(queries);
    expect(parsed.map((p) => p.expr)).toEqual(queries);
    const series = exportedSeries();
    expect(parsed.flatMap((p) => problems(p, series))).toEqual([]);
    // Every query selects at least one of gitfleet's own series.
    expect(parsed.filter((p) => !p.metrics.some((m) => m.startsWith("gitfleet_")))).toEqual([]);
  });

  it.each([
    ["an unclosed parenthesis", "sum(rate(gitfleet_reconciles_total[5m])", /parse error/],
    ["a metric nothing exports", "gitfleet_reconcile_total > 0", /no metric gitfleet_reconcile_total/],
    ["a grouping label the metric lacks", "sum by (cluster) (gitfleet_reconciles_total)", /no label cluster/],
    ["a matcher on a label the metric lacks", 'gitfleet_leader{app="x"}', /no label app/],
    [
      "le outside a histogram's buckets",
      "sum by (le) (gitfleet_reconcile_duration_seconds_sum)",
      /no label le/,
    ],
  ])("the check refuses %s", (_name, query, message) => {
    const [parsed] = parse([query]);
    expect(parsed).toBeDefined();
    expect(problems(parsed as Parsed, exportedSeries()).join("\n")).toMatch(message);
  });
});
