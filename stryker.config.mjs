// Mutation testing of the modules whose mistakes delete, move or leak: `npm run mutation` (StrykerJS
// on Node 24, which it needs; scripts/on-node.sh brings it). Incremental: results are kept in
// reports/mutation/incremental.json, so a rerun after a change tests only the mutants it touches.
// Not part of CI's critical path; the closing note of a change to these modules reports their score.
/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  vitest: { configFile: "vitest.mutation.config.ts", related: false },
  checkers: ["typescript"],
  tsconfigFile: "tsconfig.json",
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  coverageAnalysis: "perTest",
  // Mutants of module-level constants would rerun every test for each; they are left out (listed as
  // ignored in the report), as Stryker advises.
  ignoreStatic: true,
  mutate: [
    "src/sync/prune-plan.ts",
    "src/failover/workload-failover.ts",
    "src/failover/cluster-health.ts",
    "src/schedule/division/*.ts",
    "src/apimachinery/patch/strategic-merge.ts",
    "src/render/secrets.ts",
    "src/kube/lease-record.ts",
    "src/status/status-message.ts",
  ],
  incremental: true,
  incrementalFile: "reports/mutation/incremental.json",
  reporters: ["clear-text", "progress", "html", "json"],
  htmlReporter: { fileName: "reports/mutation/index.html" },
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  thresholds: { high: 90, low: 85, break: null },
  concurrency: 2,
  timeoutMS: 30_000,
  tempDirName: ".stryker-tmp",
  cleanTempDir: "always",
};
