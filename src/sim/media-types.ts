/**
 * The media types of a request's Accept header, in the order the client gave them, as kube-apiserver
 * negotiates them: the first one it can produce wins; `*∕*` and `application/*` mean JSON.
 */

/** One media range: "application/json;as=Table;v=v1;g=meta.k8s.io" → type and parameters. */
export interface MediaRange {
  readonly type: string;
  readonly parameters: Readonly<Record<string, string>>;
}

/** The ranges of an Accept header, in order (an absent header accepts JSON). */
export function parseAccept(header: string | undefined): MediaRange[] {
  if (!header?.trim()) return [{ type: "application/json", parameters: {} }];
  return header
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const [type = "", ...rest] = part.split(";").map((p) => p.trim());
      const parameters: Record<string, string> = {};
      for (const parameter of rest) {
        const at = parameter.indexOf("=");
        if (at > 0)
          parameters[parameter.slice(0, at).toLowerCase()] = parameter.slice(at + 1).replace(/^"|"$/g, "");
      }
      return { type: type.toLowerCase(), parameters };
    });
}

/** Whether a range asks for a meta.k8s.io Table (of v1 or v1beta1). */
export function isTableRange(range: MediaRange): boolean {
  const { as, g, v } = range.parameters;
  return as === "Table" && g === "meta.k8s.io" && (v === "v1" || v === "v1beta1");
}

/** Whether a range, taken as it is, is JSON (plain: no `as=` transformation asked for). */
export function isPlainJson(range: MediaRange): boolean {
  return (
    (range.type === "application/json" || range.type === "*/*" || range.type === "application/*") &&
    range.parameters.as === undefined
  );
}
