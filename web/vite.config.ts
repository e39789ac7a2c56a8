import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

// The dashboard: Preact, bundled by Vite into dist/dashboard, which the controller serves at /.
// Nothing is loaded from elsewhere at run time (no CDN, no web fonts).
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/",
  logLevel: "warn",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: fileURLToPath(new URL("../dist/dashboard", import.meta.url)),
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
  },
});
