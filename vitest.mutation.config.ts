import { defineConfig } from "vitest/config";

// The tests that judge the safety-critical pure modules `npm run mutation` mutates (stryker.config.mjs):
// fast, in-process, and no built dist/ (a mutant lives in src/ only, so a test that runs the built
// command line could never kill it).
export default defineConfig({
  test: {
    setupFiles: ["test/helpers/property-seed.ts"],
    include: [
      "test/sync/prune-plan.test.ts",
      "test/security/m3-deletion-budget-bypass.test.ts",
      "test/security/m5-adopt-then-remove.test.ts",
      "test/render/render-failover.test.ts",
      "test/failover/cluster-health.test.ts",
      "test/failover/workload-failover.test.ts",
      "test/failover/failover.property.test.ts",
      "test/schedule/division.test.ts",
      "test/schedule/webster.test.ts",
      "test/schedule/steady-division.property.test.ts",
      "test/schedule/counted-room.test.ts",
      "test/apimachinery/patch/strategic-merge.test.ts",
      "test/apimachinery/patch/strategic-merge.recorded.test.ts",
      "test/apimachinery/patch/go-stable-sort.test.ts",
      "test/render/secrets.test.ts",
      "test/security/m10-secret-values.test.ts",
      "test/kube/lease-record.test.ts",
      "test/kube/leader-election.property.test.ts",
      "test/status/status-message.test.ts",
      "test/status/codecs.property.test.ts",
    ],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ["default"],
  },
});
