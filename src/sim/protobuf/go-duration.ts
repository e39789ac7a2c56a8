/**
 * Go's time.Duration text, as metav1.Duration carries it in JSON ("1h30m0s", "500ms", "0s"), to and
 * from nanoseconds, which is how the protobuf form carries it.
 */

const UNITS: Readonly<Record<string, number>> = {
  ns: 1,
  us: 1e3,
  µs: 1e3,
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

/** Nanoseconds of a Go duration string; NaN when it is not one. */
export function parseGoDuration(text: string): number {
  const match = /^([-+]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h))+$/.exec(text);
  if (text === "0") return 0;
  if (!match) return Number.NaN;
  const sign = match[1] === "-" ? -1 : 1;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(/((?:\d+(?:\.\d*)?|\.\d+))(ns|us|µs|ms|s|m|h)/g))
    total += Number(amount) * (UNITS[unit as string] ?? Number.NaN);
  return sign * Math.round(total);
}

/** Go's String() of a duration in nanoseconds: "1h0m0s", "1.5s", "300ms", "0s". */
export function formatGoDuration(nanoseconds: number): string {
  if (nanoseconds === 0) return "0s";
  const sign = nanoseconds < 0 ? "-" : "";
  const ns = Math.abs(nanoseconds);
  if (ns < 1e3) return `${sign}${ns}ns`;
  if (ns < 1e6) return `${sign}${trim(ns / 1e3)}µs`;
  if (ns < 1e9) return `${sign}${trim(ns / 1e6)}ms`;
  const hours = Math.floor(ns / 3600e9);
  const minutes = Math.floor((ns % 3600e9) / 60e9);
  const seconds = trim((ns % 60e9) / 1e9);
  if (hours > 0) return `${sign}${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${sign}${minutes}m${seconds}s`;
  return `${sign}${seconds}s`;
}

// A fraction as Go prints it: up to nine digits, trailing zeros dropped.
function trim(value: number): string {
  return Number(value.toFixed(9)).toString();
}
