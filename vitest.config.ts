import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Property tests run on the recorded seed (test/property-seeds.json) unless asked otherwise.
    setupFiles: ["test/helpers/property-seed.ts"],
    testTimeout: 60_000,
    // Hooks that start members or remove hundreds of directories get the same room as tests.
    hookTimeout: 60_000,
    reporters: ["default"],
  },
});
