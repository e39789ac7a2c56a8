import type { RenderedDocument } from "./chart-request.js";

// `helm template` prints every rendered document after a "---" line and a "# Source:" comment naming
// its template as <chart>/<path>. This splits that output back into documents, each with the
// chart-relative path of its template (subcharts keep their charts/<sub>/ prefix).

const SOURCE = /^# Source: [^/\n]+\/(.+)$/;

/** The documents of `helm template` output, in order. */
export function splitTemplateOutput(output: string): RenderedDocument[] {
  const documents: RenderedDocument[] = [];
  let template: string | undefined;
  let lines: string[] = [];
  const flush = () => {
    const text = lines.join("\n").trim();
    if (text !== "") documents.push({ template: template ?? "(unknown template)", text: `${text}\n` });
    template = undefined;
    lines = [];
  };
  for (const line of output.split("\n")) {
    if (line === "---" || line.startsWith("--- ")) {
      flush();
      continue;
    }
    const source = template === undefined && lines.every((l) => l.trim() === "") ? SOURCE.exec(line) : null;
    if (source) template = source[1];
    else lines.push(line);
  }
  flush();
  return documents;
}
