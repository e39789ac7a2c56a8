import { readFileSync } from "node:fs";

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

/** CPU seconds (user and system) another process has used so far, from /proc (Linux); 0 when unreadable. */
export function childCpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    // Fields after the command's closing parenthesis: state is the 1st, utime the 12th, stime the 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

// USER_HZ: the unit of /proc/<pid>/stat's times, 100 on every Linux this runs on.
const CLOCK_TICKS = 100;

/** CPU seconds (user and system) this process has used so far. */
export function ownCpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

/** Peak resident set size of another process so far, in MiB, from /proc (Linux); 0 when unreadable. */
export function childPeakRssMiB(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const hwm = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return hwm ? Number(hwm[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}
