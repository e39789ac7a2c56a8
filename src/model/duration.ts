const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** Parses a Go-style duration ("30s", "10m", "1h30m") into milliseconds; undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  if (!/^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$/.test(text)) return undefined;
  let total = 0;
  for (const [, amount, , unit] of text.matchAll(/([0-9]+(\.[0-9]+)?)(ns|us|µs|ms|s|m|h)/g))
    total += Number(amount) * (UNIT_MS[unit ?? ""] ?? 0);
  return total;
}
