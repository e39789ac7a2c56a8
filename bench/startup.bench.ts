import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/**
 * Benchmark: how fast the CLI answers — `--version`, `--help` and `validate` of the example fleet —
 * beside Node starting alone. Each runs as a fresh process several times; prints the median and the
 * fastest. Asserts nothing. Run with `npm run bench`.
 */
const BIN = fileURLToPath(new URL("../../bin/gitfleet.js", import.meta.url));
const EXAMPLE = fileURLToPath(new URL("../../example-repo", import.meta.url));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 11);

function timed(args: readonly string[]): { median: number; fastest: number } {
  const times: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.hrtime.bigint();
    const result = spawnSync(process.execPath, args, { stdio: ["ignore", "ignore", "pipe"] });
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
    if (result.status !== 0) throw new Error(`${args.join(" ")} exited ${result.status}: ${result.stderr}`);
  }
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(times.length / 2)] ?? 0, fastest: times[0] ?? 0 };
}

const cases: readonly [string, readonly string[]][] = [
  ["node -e 0 (Node alone)", ["-e", "0"]],
  ["gitfleet --version", [BIN, "--version"]],
  ["gitfleet --help", [BIN, "--help"]],
  ["gitfleet validate example-repo", [BIN, "validate", EXAMPLE]],
];
process.stdout.write(`startup: ${ROUNDS} runs each, fresh processes\n`);
for (const [name, args] of cases) {
  const { median, fastest } = timed(args);
  process.stdout.write(
    `  ${name.padEnd(34)} median ${median.toFixed(0).padStart(5)} ms   fastest ${fastest.toFixed(0).padStart(5)} ms\n`,
  );
}
