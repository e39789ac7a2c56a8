import { asList, asMap } from "../../apimachinery/json.js";

/** A label map as kubectl and the API's printers write it: "app=web,tier=front" (keys sorted), or "<none>". */
export function formatLabels(labels: unknown): string {
  const entries = Object.entries(asMap(labels)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return entries.length === 0 ? "<none>" : entries.map(([k, v]) => `${k}=${String(v)}`).join(",");
}

/**
 * A LabelSelector as the API's printers write it (metav1.FormatLabelSelector): its requirements
 * sorted by key — `app=web`, `tier in (a,b)`, `tier notin (c)`, `canary`, `!legacy` — or "<none>".
 */
export function formatLabelSelector(selector: unknown): string {
  const { matchLabels, matchExpressions } = asMap(selector);
  const requirements: { key: string; text: string }[] = Object.entries(asMap(matchLabels)).map(
    ([key, value]) => ({
      key,
      text: `${key}=${String(value)}`,
    }),
  );
  for (const expression of asList(matchExpressions).map(asMap)) {
    const key = String(expression.key ?? "");
    const values = asList(expression.values).map(String).sort();
    const operator = String(expression.operator ?? "");
    const text =
      operator === "In"
        ? `${key} in (${values.join(",")})`
        : operator === "NotIn"
          ? `${key} notin (${values.join(",")})`
          : operator === "Exists"
            ? key
            : `!${key}`;
    requirements.push({ key, text });
  }
  requirements.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return requirements.length === 0 ? "<none>" : requirements.map((r) => r.text).join(",");
}
