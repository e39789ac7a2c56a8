import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";

/** src/, whose imports the architecture tests read. */
export const SRC = fileURLToPath(new URL("../../src", import.meta.url));

const IMPORT = /(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

/** Every TypeScript source file below a directory. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

/**
 * Each source file of src/ and the files of src/ it imports (static, dynamic and type-only imports,
 * and re-exports), as absolute paths.
 */
export function importGraph(): Map<string, string[]> {
  const files = new Set(sourceFiles(SRC));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets: string[] = [];
    for (const match of readFileSync(file, "utf8").matchAll(IMPORT)) {
      const spec = normalize(join(dirname(file), (match[1] ?? match[2]) as string));
      const candidates = [
        spec.replace(/\.js$/, ".ts"),
        spec.replace(/\.js$/, ".tsx"),
        `${spec}.ts`,
        join(spec, "index.ts"),
      ];
      const target = candidates.find((c) => files.has(c));
      if (target) targets.push(target);
    }
    graph.set(file, targets);
  }
  return graph;
}
