import { defineConfig } from "vitest/config";

// The second tier: real control planes (test/e2e/cluster/), started once for the whole run.
export default defineConfig({
  test: {
    setupFiles: ["test/helpers/property-seed.ts"],
    include: ["test/e2e/**/*.e2e.ts"],
    testTimeout: 300_000,
    hookTimeout: 900_000,
    fileParallelism: false,
    reporters: ["default"],
  },
});
