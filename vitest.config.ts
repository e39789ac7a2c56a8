import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    // Hooks that start members or remove hundreds of directories get the same room as tests.
    hookTimeout: 60_000,
    reporters: ["default"],
  },
});
