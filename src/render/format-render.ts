import type { RenderError, RenderResult } from "./render-result.js";

/** One line per render error, naming the Override file and rule, the cluster and the object. */
export function formatRenderError(error: RenderError): string {
  const rule = error.rule === undefined ? "" : ` rule ${error.rule}`;
  return `${error.file}${rule}: cluster ${error.cluster}: ${error.resource}: ${error.message} [RENDER_FAILED]`;
}

/** All rendered files as one document, each preceded by its path: the form golden tests compare. */
export function formatRenderedTree(result: RenderResult): string {
  return result.objects.map((o) => `# ${o.path}\n${o.text}`).join("---\n");
}
