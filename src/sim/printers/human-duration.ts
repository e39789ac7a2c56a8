/**
 * How kube-apiserver's printers say how long ago something happened (apimachinery's
 * duration.HumanDuration): "45s", "3m20s", "12m", "5h10m", "3d4h", "2y10d".
 */
export function humanDuration(milliseconds: number): string {
  const seconds = Math.trunc(milliseconds / 1000);
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) return withPart(`${minutes}m`, seconds % 60, "s");
  if (minutes < 180) return `${minutes}m`;
  return longDuration(Math.trunc(seconds / 3600), minutes % 60);
}

// Hours and more: "5h10m", "30h", "3d4h", "45d", "2y10d", "9y".
function longDuration(hours: number, minutes: number): string {
  if (hours < 8) return withPart(`${hours}h`, minutes, "m");
  if (hours < 48) return `${hours}h`;
  const days = Math.trunc(hours / 24);
  if (hours < 24 * 8) return withPart(`${days}d`, hours % 24, "h");
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.trunc(days / 365);
  if (hours < 24 * 365 * 8) return withPart(`${years}y`, days % 365, "d");
  return `${years}y`;
}

function withPart(whole: string, part: number, unit: string): string {
  return part === 0 ? whole : `${whole}${part}${unit}`;
}

/** The age of a timestamp (RFC 3339) at `now`, or "<unknown>" without one. */
export function ageOf(timestamp: unknown, now: Date): string {
  const at = typeof timestamp === "string" ? Date.parse(timestamp) : Number.NaN;
  return Number.isNaN(at) ? "<unknown>" : humanDuration(now.getTime() - at);
}
