import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";

// What gitfleet asks of Helm: one `helm template` per app build (the default and each values
// target), described completely by data so that the edge that runs helm can cache its output by a
// digest of these inputs, and a source commit renders identically every time.

/** Where a chart comes from. */
export type ChartLocation =
  /** A directory in the fleet repo: its files are the chart; `digest` covers every path and byte. */
  | {
      readonly kind: "directory";
      readonly path: string;
      readonly files: readonly string[];
      readonly digest: string;
    }
  /** A chart version from an HTTP(S) chart repository (index.yaml). */
  | { readonly kind: "repository"; readonly repo: string; readonly name: string; readonly version: string }
  /** A chart version from an OCI registry: reference is oci://host/path/name. */
  | { readonly kind: "oci"; readonly reference: string; readonly version: string };

/** A values document, in merge order, with the name its errors are reported under. */
export interface ValuesInput {
  readonly name: string;
  readonly text: string;
}

/** One `helm template`: everything its output depends on. */
export interface ChartRequest {
  /** The digest of every field below: equal requests render equally. */
  readonly key: string;
  readonly chart: ChartLocation;
  readonly releaseName: string;
  readonly namespace: string;
  readonly values: readonly ValuesInput[];
  /** Capabilities: the Kubernetes version ("v1.36.0") and the API versions served beyond the built-in ones. */
  readonly kubeVersion: string;
  readonly apiVersions: readonly string[];
}

/** One rendered template's output document. */
export interface RenderedDocument {
  /** The chart-relative path of the template that made it: "templates/deployment.yaml". */
  readonly template: string;
  readonly text: string;
}

/** What the edge answers for a request. */
export type ChartRender =
  | { readonly ok: true; readonly documents: readonly RenderedDocument[] }
  | { readonly ok: false; readonly error: string };

/** Renders by request key. */
export type ChartRenders = ReadonlyMap<string, ChartRender>;

/** The request with its key. */
export function chartRequest(fields: Omit<ChartRequest, "key">): ChartRequest {
  const canonical = JSON.stringify([
    "gitfleet-helm-1",
    fields.chart,
    fields.releaseName,
    fields.namespace,
    fields.values,
    fields.kubeVersion,
    fields.apiVersions,
  ]);
  return { key: bytesToHex(sha256(utf8ToBytes(canonical))), ...fields };
}

/** How a chart is named in status, plans and problems. */
export function chartLabel(chart: ChartLocation): string {
  switch (chart.kind) {
    case "directory":
      return chart.path;
    case "repository":
      return `${chart.repo.replace(/\/+$/, "")}/${chart.name}@${chart.version}`;
    case "oci":
      return `${chart.reference}@${chart.version}`;
  }
}
