/** Wall time and memory of one benchmark step. */
export interface Measurement {
  readonly label: string;
  readonly milliseconds: number;
  readonly heapUsedMiB: number;
}

/** Runs a step after a GC (when --expose-gc is on) and reports its time and the heap it left in use. */
export function measure<T>(label: string, step: () => T): { result: T; measurement: Measurement } {
  globalThis.gc?.();
  const start = process.hrtime.bigint();
  const result = step();
  const milliseconds = Number(process.hrtime.bigint() - start) / 1e6;
  const heapUsedMiB = process.memoryUsage().heapUsed / 2 ** 20;
  return { result, measurement: { label, milliseconds, heapUsedMiB } };
}

/** Peak resident set size of the process so far, in MiB. */
export function peakRssMiB(): number {
  return process.resourceUsage().maxRSS / 1024;
}

/** Prints measurements as an aligned table. */
export function printMeasurements(title: string, measurements: readonly Measurement[]): void {
  process.stdout.write(`\n${title}\n`);
  for (const m of measurements) {
    process.stdout.write(
      `  ${m.label.padEnd(44)} ${m.milliseconds.toFixed(0).padStart(8)} ms   heap ${m.heapUsedMiB.toFixed(0).padStart(6)} MiB\n`,
    );
  }
  process.stdout.write(`  ${"peak RSS".padEnd(44)} ${peakRssMiB().toFixed(0).padStart(8)} MiB\n`);
}
