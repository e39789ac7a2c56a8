import { loadFleet } from "../src/load/load-fleet.js";
import { renderFleet } from "../src/render/render-fleet.js";
import { generateFleet } from "./generate-fleet.js";
import { measure, printMeasurements } from "./measure.js";

/**
 * Benchmark: render a generated fleet of 10,000 apps over 200 clusters (each app on two clusters,
 * about 50,000 rendered objects). Prints time, objects per second and memory; asserts nothing.
 */
const size = {
  apps: Number(process.env.BENCH_APPS ?? 10_000),
  clusters: Number(process.env.BENCH_CLUSTERS ?? 200),
  clustersPerApp: 2,
};
const tree = generateFleet(size);
const loaded = measure("load and validate", () => loadFleet(tree));
const model = loaded.result.model;
if (!model) throw new Error(`generated fleet is invalid: ${JSON.stringify(loaded.result.problems[0])}`);
const first = measure("render (first)", () => renderFleet(model));
const second = measure("render on top of the first (steady)", () =>
  renderFleet(model, { previous: first.result }),
);
const objects = second.result.objects.length;
const bytes = second.result.objects.reduce((sum, o) => sum + o.text.length, 0);
printMeasurements(
  `render: ${size.apps} apps, ${size.clusters} clusters, ${objects} rendered objects (${(bytes / 2 ** 20).toFixed(1)} MiB)`,
  [loaded.measurement, first.measurement, second.measurement],
);
process.stdout.write(
  `  objects per second ${((objects / second.measurement.milliseconds) * 1000).toFixed(0)}; render errors ${second.result.errors.length}\n`,
);
