/**
 * Kubernetes resource quantities ("500m", "1Gi", "2e3"), following k8s.io/apimachinery's
 * resource.Quantity grammar: a signed decimal number, then a binary SI suffix (Ki..Ei), a decimal SI
 * suffix (n, u, m, "", k, M, G, T, P, E) or a decimal exponent (e3, E-2).
 */
const QUANTITY =
  /^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$/;

const BINARY: Record<string, number> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
const DECIMAL: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

/** True when the text is a valid Kubernetes quantity. */
export function isQuantity(text: string): boolean {
  return QUANTITY.test(text);
}

/**
 * The value of a quantity as a number in base units (cores, bytes, counts), or undefined when the text
 * is not a quantity. Kubernetes rounds up to the nearest milli-unit; so does this ("0.0001" → 0.001).
 */
export function parseQuantity(text: string): number | undefined {
  const match = QUANTITY.exec(text);
  if (!match) return undefined;
  const number = Number(match[1]);
  const suffix = match[2] ?? "";
  const multiplier = BINARY[suffix] ?? DECIMAL[suffix] ?? (suffix === "" ? 1 : 10 ** Number(suffix.slice(1)));
  return Math.ceil(number * multiplier * 1000 - 1e-9) / 1000;
}

/** A quantity in milli-units, rounded up, as Kubernetes compares CPU. */
export function parseMilliQuantity(text: string): number | undefined {
  const value = parseQuantity(text);
  return value === undefined ? undefined : Math.round(value * 1000);
}
