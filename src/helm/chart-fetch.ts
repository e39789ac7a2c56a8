import { createHash } from "node:crypto";
import { chartIndexEntry } from "../manifests/helm/chart-index.js";
import { type ChartLocation, chartLabel } from "../manifests/helm/chart-request.js";
import {
  type FetchAnswer,
  FetchError,
  type FetchRequest,
  fetchBounded,
  type Proxies,
  type Resolver,
} from "./bounded-fetch.js";
import type { Admission, ChartSources } from "./chart-sources.js";

/** The largest index.yaml read (refused before parsing past it). */
export const MAX_INDEX_BYTES = 32 * 2 ** 20;
/** The largest chart archive read. */
export const MAX_ARCHIVE_BYTES = 20 * 2 ** 20;
const MAX_MANIFEST_BYTES = 4 * 2 ** 20;
const MAX_TOKEN_BYTES = 2 ** 20;

const HELM_LAYER = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";
const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";

/** Where charts may be fetched from, and which registries speak plain HTTP. */
export interface ChartFetchContext {
  readonly sources: ChartSources;
  /** Registries (host:port) reached over plain HTTP (GITFLEET_HELM_PLAIN_HTTP). */
  readonly plainHttpHosts: readonly string[];
  /** How host names are resolved (default: node:dns). */
  readonly resolve?: Resolver;
  /** The operator's proxies (default: none). */
  readonly proxies?: Proxies;
}

type Admitted = Extract<Admission, { ok: true }>;
type RemoteChart = Exclude<ChartLocation, { kind: "directory" }>;

/**
 * A chart version's archive, fetched by gitfleet itself — never by helm — through the chart-source
 * policy and the bounded client: from a chart repository (its index.yaml, then the archive the index
 * names, checked against the index's digest), or from an OCI registry (the manifest of the version's
 * tag, then its chart layer, checked against the layer's digest; an anonymous token when the registry
 * asks for one). Helm is then handed the local archive. Errors say what was refused or what failed.
 */
export async function fetchChartArchive(chart: RemoteChart, context: ChartFetchContext): Promise<Buffer> {
  return chart.kind === "repository" ? fromRepository(chart, context) : fromRegistry(chart, context);
}

async function fromRepository(
  chart: Extract<ChartLocation, { kind: "repository" }>,
  context: ChartFetchContext,
): Promise<Buffer> {
  const { sources } = context;
  const fetchOne = (request: FetchRequest) =>
    fetchBounded(sources, withProxies(request, context), context.resolve);
  const label = chartLabel(chart);
  const base = new URL(chart.repo.endsWith("/") ? chart.repo : `${chart.repo}/`);
  const admission = admit(sources.admitSource(base), `chart repository ${origin(base)}`);
  const index = await fetchOne({
    url: new URL("index.yaml", base),
    admission,
    maxBytes: MAX_INDEX_BYTES,
    what: `the index of chart repository ${admission.origin}`,
  });
  expectOk(index, `the index of chart repository ${admission.origin}`);
  const entry = chartIndexEntry(index.body.toString("utf8"), chart.name, chart.version);
  if ("error" in entry) throw new FetchError(`chart repository ${admission.origin}: ${entry.error}`);
  let url: URL;
  try {
    url = new URL(entry.url, base);
  } catch {
    throw new FetchError(
      `chart repository ${admission.origin}: its index names an archive that is not a URL`,
    );
  }
  const followed = admit(sources.admitFollow(url, admission), `${label}: the archive its index names`);
  const archive = await fetchOne({
    url,
    admission: followed,
    maxBytes: MAX_ARCHIVE_BYTES,
    what: `the archive of ${label}`,
  });
  expectOk(archive, `the archive of ${label}`);
  if (entry.digest && sha256(archive.body) !== entry.digest)
    throw new FetchError(`the archive of ${label} does not have the digest its index gives`);
  return archive.body;
}

async function fromRegistry(
  chart: Extract<ChartLocation, { kind: "oci" }>,
  context: ChartFetchContext,
): Promise<Buffer> {
  const { sources, plainHttpHosts } = context;
  const fetchOne = (request: FetchRequest) =>
    fetchBounded(sources, withProxies(request, context), context.resolve);
  const label = chartLabel(chart);
  const reference = new URL(chart.reference);
  const scheme = plainHttpHosts.includes(reference.host) ? "http" : "https";
  const api = `${scheme}://${reference.host}`;
  const admission = { ...admit(sources.admitSource(reference), `registry ${reference.host}`), origin: api };
  const repository = reference.pathname.replace(/^\/+/, "");
  const tag = chart.version.replaceAll("+", "_");
  const get = async (path: string, maxBytes: number, what: string, headers: Record<string, string>) =>
    fetchOne({
      url: new URL(`${api}/v2/${repository}/${path}`),
      admission,
      maxBytes,
      what,
      headers,
    });
  let auth: Record<string, string> = {};
  const manifestWhat = `the manifest of ${label}`;
  let manifest = await get(`manifests/${encodeURIComponent(tag)}`, MAX_MANIFEST_BYTES, manifestWhat, {
    accept: OCI_MANIFEST,
  });
  if (manifest.status === 401) {
    auth = await anonymousToken({ sources, fetchOne }, admission, manifest, repository, label);
    manifest = await get(`manifests/${encodeURIComponent(tag)}`, MAX_MANIFEST_BYTES, manifestWhat, {
      accept: OCI_MANIFEST,
      ...auth,
    });
  }
  expectOk(manifest, manifestWhat);
  const layer = chartLayer(manifest.body, label);
  const blob = await get(`blobs/${layer.digest}`, MAX_ARCHIVE_BYTES, `the chart layer of ${label}`, auth);
  expectOk(blob, `the chart layer of ${label}`);
  if (`sha256:${sha256(blob.body)}` !== layer.digest)
    throw new FetchError(`the chart layer of ${label} does not have the digest its manifest gives`);
  return blob.body;
}

// The Helm chart layer of an OCI manifest: its digest, with its size within the bound.
function chartLayer(body: Buffer, label: string): { digest: string } {
  let manifest: unknown;
  try {
    manifest = JSON.parse(body.toString("utf8"));
  } catch {
    throw new FetchError(`the manifest of ${label} is not JSON`);
  }
  const layers = isMap(manifest) && Array.isArray(manifest.layers) ? manifest.layers : [];
  const layer = layers.find((l): l is Record<string, unknown> => isMap(l) && l.mediaType === HELM_LAYER);
  if (!layer || typeof layer.digest !== "string" || !/^sha256:[0-9a-f]{64}$/.test(layer.digest))
    throw new FetchError(`the manifest of ${label} has no Helm chart layer`);
  if (typeof layer.size === "number" && layer.size > MAX_ARCHIVE_BYTES)
    throw new FetchError(`the chart layer of ${label} is larger than ${MAX_ARCHIVE_BYTES} bytes`);
  return { digest: layer.digest };
}

// A registry that asks for a bearer token: an anonymous one from its token service (the realm it
// names, admitted as any URL a source leads to), for pulling this repository only.
async function anonymousToken(
  { sources, fetchOne }: { sources: ChartSources; fetchOne: (request: FetchRequest) => Promise<FetchAnswer> },
  admission: Admitted,
  answer: FetchAnswer,
  repository: string,
  label: string,
): Promise<Record<string, string>> {
  const challenge = parseChallenge(answer.headers["www-authenticate"] ?? "");
  if (!challenge?.realm)
    throw new FetchError(`the registry of ${label} asks for credentials gitfleet does not have`);
  let realm: URL;
  try {
    realm = new URL(challenge.realm);
  } catch {
    throw new FetchError(`the registry of ${label} names a token service that is not a URL`);
  }
  const followed = admit(sources.admitFollow(realm, admission), `the token service of ${label}`);
  if (challenge.service) realm.searchParams.set("service", challenge.service);
  realm.searchParams.set("scope", `repository:${repository}:pull`);
  const token = await fetchOne({
    url: realm,
    admission: followed,
    maxBytes: MAX_TOKEN_BYTES,
    what: `the token service of ${label}`,
  });
  expectOk(token, `the token service of ${label}`);
  let value: unknown;
  try {
    const parsed = JSON.parse(token.body.toString("utf8")) as unknown;
    value = isMap(parsed) ? (parsed.token ?? parsed.access_token) : undefined;
  } catch {
    value = undefined;
  }
  if (typeof value !== "string" || !/^[\x21-\x7e]{1,16384}$/.test(value))
    throw new FetchError(`the token service of ${label} gave no token`);
  return { authorization: `Bearer ${value}` };
}

// `Bearer realm="…",service="…",scope="…"`: the parameters, unquoted.
function parseChallenge(header: string): Record<string, string> | undefined {
  const match = /^\s*Bearer\s+(.*)$/i.exec(header);
  if (!match) return undefined;
  const params: Record<string, string> = {};
  for (const [, key, value] of (match[1] as string).matchAll(/([a-zA-Z_]+)="([^"]*)"/g))
    if (key && value !== undefined) params[key.toLowerCase()] = value;
  return params;
}

function withProxies(request: FetchRequest, context: ChartFetchContext): FetchRequest {
  return context.proxies ? { ...request, proxies: context.proxies } : request;
}

function admit(admission: Admission, what: string): Admitted {
  if (!admission.ok) throw new FetchError(`${what}: refused: ${admission.reason}`);
  return admission;
}

function expectOk(answer: FetchAnswer, what: string): void {
  if (answer.status !== 200) throw new FetchError(`${what}: answered ${answer.status}`);
}

function origin(url: URL): string {
  return `${url.protocol}//${url.host}`;
}

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
