import { loadFleet } from "../src/load/load-fleet.js";
import { generateFleet } from "./generate-fleet.js";
import { measure, printMeasurements } from "./measure.js";

/**
 * Benchmark: validate a generated fleet of 5,000 apps and 200 clusters (about 20,000 files). Prints
 * figures; asserts nothing. Run with `npm run bench`.
 */
const size = {
  apps: Number(process.env.BENCH_APPS ?? 5000),
  clusters: Number(process.env.BENCH_CLUSTERS ?? 200),
};
const generated = measure("generate fleet repo in memory", () => generateFleet(size));
const tree = generated.result;
const bytes = [...tree.values()].reduce((sum, file) => sum + file.length, 0);
const first = measure("validate (first run)", () => loadFleet(tree));
const second = measure("validate (second run)", () => loadFleet(tree));
const result = second.result;
const resources = result.model?.apps.reduce((n, app) => n + app.resources.length, 0) ?? 0;
printMeasurements(
  `validate: ${size.apps} apps, ${size.clusters} clusters, ${tree.size} files (${(bytes / 2 ** 20).toFixed(1)} MiB), ${resources} resources, ${result.problems.length} problems`,
  [generated.measurement, first.measurement, second.measurement],
);
if (result.problems.length > 0) {
  process.stdout.write(`  first problem: ${JSON.stringify(result.problems[0])}\n`);
}
