/**
 * A fingerprint of the built-in prototypes a polluting write would change: every own property of
 * Object.prototype, Array.prototype and Function.prototype with its descriptor's shape. Tests take
 * one before and after feeding hostile input and require them to be equal.
 */
export function prototypeFingerprint(): string {
  const describe = (target: object) =>
    Object.getOwnPropertyNames(target)
      .sort()
      .map((name) => {
        const descriptor = Object.getOwnPropertyDescriptor(target, name);
        const value = descriptor && "value" in descriptor ? typeof descriptor.value : "accessor";
        return `${name}:${value}:${String(descriptor?.enumerable)}`;
      })
      .join(",");
  return [Object.prototype, Array.prototype, Function.prototype].map(describe).join("\n");
}

/** Names a polluted prototype would answer to: checked on a fresh object after an attack. */
export const POLLUTION_PROBES = ["BASH_ENV", "polluted", "timeoutMs", "x", "shell", "mode"] as const;

/** True when a fresh object inherits any of the probe names (the prototype was written to). */
export function isPolluted(): boolean {
  const fresh: Record<string, unknown> = {};
  return POLLUTION_PROBES.some((name) => fresh[name] !== undefined);
}
