/**
 * A component's command line: its defaults with the class's extraArgs added or replacing them, as
 * `--name=value` sorted by name (as kubeadm writes static pods), so the same settings always render
 * the same arguments and a plan shows a changed flag as one line.
 */
export function componentArgs(
  defaults: Readonly<Record<string, string>>,
  extra: Readonly<Record<string, string>>,
): string[] {
  const merged = new Map<string, string>();
  for (const [name, value] of Object.entries(defaults)) merged.set(name, value);
  for (const [name, value] of Object.entries(extra)) merged.set(name, value);
  return [...merged.keys()].sort().map((name) => `--${name}=${merged.get(name)}`);
}

/** The flags of an argument list by name (`--name=value`; a bare `--flag` is "true"). */
export function argsByName(args: readonly unknown[]): Map<string, string> {
  const flags = new Map<string, string>();
  for (const arg of args) {
    if (typeof arg !== "string" || !arg.startsWith("--")) continue;
    const at = arg.indexOf("=");
    if (at < 0) flags.set(arg.slice(2), "true");
    else flags.set(arg.slice(2, at), arg.slice(at + 1));
  }
  return flags;
}
