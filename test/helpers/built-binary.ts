import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const built = new Map<string, string>();

/**
 * The binary a scripts/build-*.sh script builds from Go modules (each caches its build and prints the
 * binary's path on its last line), built once per test process.
 */
export function builtBinary(script: string): string {
  const known = built.get(script);
  if (known) return known;
  const path = execFileSync("bash", [join(root, "scripts", script)], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    timeout: 20 * 60_000,
  })
    .trim()
    .split("\n")
    .pop() as string;
  built.set(script, path);
  return path;
}
