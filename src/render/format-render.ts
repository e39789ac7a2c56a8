import type { RenderError, RenderResult } from "./render-result.js";

/**
 * One line per render error, naming the Override file and rule, the cluster and the object; with
 * `where`, an error about a field gives its line and column.
 */
export function formatRenderError(
  error: RenderError,
  where?: (at: NonNullable<RenderError["at"]>) => { readonly line: number; readonly column: number },
): string {
  const rule = error.rule === undefined ? "" : ` rule ${error.rule}`;
  const at = error.at && where ? where(error.at) : undefined;
  const file = at ? `${error.file}:${at.line}:${at.column}` : error.file;
  return `${file}${rule}: cluster ${error.cluster}: ${error.resource}: ${error.message} [${error.code ?? "RENDER_FAILED"}]`;
}

/** All rendered files as one document, each preceded by its path: the form golden tests compare. */
export function formatRenderedTree(result: RenderResult): string {
  return result.objects.map((o) => `# ${o.path}\n${o.text}`).join("---\n");
}
