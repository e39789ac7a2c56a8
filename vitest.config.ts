import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Property tests run on the recorded seed (test/property-seeds.json) unless asked otherwise.
    setupFiles: ["test/helpers/property-seed.ts"],
    testTimeout: 60_000,
    // Hooks that start members or remove hundreds of directories get the same room as tests.
    hookTimeout: 60_000,
    // One file per core: most of a file's time is waiting on the processes, servers and Git it
    // starts, so vitest's default (a core less, one file at a time on two cores) leaves a core idle.
    maxWorkers: availableParallelism(),
    reporters: ["default"],
  },
});
