import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import {
  type ChartLocation,
  type ChartRender,
  type ChartRequest,
  chartLabel,
  type RenderedDocument,
} from "../manifests/helm/chart-request.js";
import { splitTemplateOutput } from "../manifests/helm/template-output.js";
import type { FileTree } from "../model/file-tree.js";
import { mapConcurrently } from "../util/map-concurrently.js";
import { isExecutable, type ProgramResult, runProgram } from "../util/run-program.js";
import { type Proxies, proxiesOf, type Resolver } from "./bounded-fetch.js";
import { fetchChartArchive } from "./chart-fetch.js";
import { ChartSources } from "./chart-sources.js";
import { type HelmEnvironment, helmEnvironment } from "./helm-environment.js";

// The edge that runs helm for the pure core. A request's output is cached on disk by a digest of
// everything it depends on — the chart's content (a repo directory's files, or the fetched archive's
// bytes), the values, release, namespace and capabilities — so a reconcile of unchanged charts runs
// no helm process, and a source commit renders identically every time. A chart version from a
// repository or registry is fetched once into the cache and used from there ever after.
//
// Charts from repositories and registries are fetched by gitfleet itself (chart-fetch.ts), through
// the chart-source policy and a bounded client, and helm is handed the local archive: helm never
// reaches the network. It runs with an environment of its own: no kubeconfig, no user repositories or
// registry logins, no plugins, no proxies, temporary homes; its output, time, memory and CPU time are
// bounded (util/run-program.ts). Failures of `helm template` are cached like output (they are a
// function of the same inputs), a run past its memory bound too; a run that times out is not. A fetch
// that fails is tried again only after a backoff (30 s, doubling to 15 minutes), answering its error
// meanwhile, so an unreachable or refused source costs no request per reconcile.

/** What the renderer did since it was made: cache hits, helm template runs and chart fetches. */
export interface HelmStats {
  hits: number;
  helmRuns: number;
  fetches: number;
}

const MAX_OUTPUT = 32 * 2 ** 20;
const MAX_ERROR = 4000;
const CONCURRENCY = 2;
const MEMORY_ENTRIES = 512;
const PASSED_VARIABLES = ["PATH"];
/** The first wait before a failed fetch is tried again, and the longest. */
const FETCH_BACKOFF_MS = 30_000;
const MAX_FETCH_BACKOFF_MS = 15 * 60_000;

/** What a renderer is given besides helm's environment. */
export interface ChartRendererOptions {
  /** Where charts may be fetched from (default: any public address). */
  readonly sources?: ChartSources;
  /** The clock of fetch backoffs (tests move it). */
  readonly now?: () => number;
  /** How host names are resolved (default: node:dns; tests give their own). */
  readonly resolve?: Resolver;
  /** The proxies chart fetches go through (default: HTTPS_PROXY, HTTP_PROXY and NO_PROXY of this process). */
  readonly proxies?: Proxies;
}

/** Renders chart requests with helm, through a cache. One per process: it keeps recent renders in memory. */
export class ChartRenderer {
  readonly stats: HelmStats = { hits: 0, helmRuns: 0, fetches: 0 };
  private readonly memory = new Map<string, ChartRender>();
  private readonly archives = new Map<string, Promise<{ path: string; digest: string }>>();
  private readonly failedFetches = new Map<string, { error: Error; attempts: number; retryAt: number }>();
  private readonly sources: ChartSources;
  private readonly now: () => number;
  private readonly resolve: Resolver | undefined;
  private readonly proxies: Proxies;

  constructor(
    private readonly environment: HelmEnvironment,
    options: ChartRendererOptions = {},
  ) {
    this.sources = options.sources ?? (ChartSources.parse([]) as ChartSources);
    this.now = options.now ?? Date.now;
    this.resolve = options.resolve;
    this.proxies = options.proxies ?? proxiesOf(process.env);
  }

  /** The renders of the requests, by request key (charts in directories are read from `tree`). */
  async renderAll(requests: readonly ChartRequest[], tree: FileTree): Promise<Map<string, ChartRender>> {
    const unique = [...new Map(requests.map((request) => [request.key, request])).values()];
    const renders = await mapConcurrently(unique, CONCURRENCY, (request) => this.render(request, tree));
    return new Map(unique.map((request, index) => [request.key, renders[index] as ChartRender]));
  }

  /** One request's render; never throws (a failure is a render with an error). */
  async render(request: ChartRequest, tree: FileTree): Promise<ChartRender> {
    try {
      const archive = request.chart.kind === "directory" ? undefined : await this.archive(request.chart);
      const key = archive ? digestOf(`${request.key}\0${archive.digest}`) : request.key;
      const cached = this.memory.get(key) ?? (await this.readCached(key));
      if (cached) {
        this.stats.hits++;
        this.remember(key, cached);
        return cached;
      }
      const { render, cacheable } = await this.template(request, tree, archive?.path);
      if (cacheable) await this.writeCached(key, render);
      this.remember(key, render);
      return render;
    } catch (error) {
      return { ok: false, error: bounded(error instanceof Error ? error.message : String(error)) };
    }
  }

  private remember(key: string, render: ChartRender): void {
    this.memory.delete(key);
    this.memory.set(key, render);
    if (this.memory.size > MEMORY_ENTRIES) this.memory.delete(this.memory.keys().next().value as string);
  }

  private renderedPath(key: string): string {
    return join(this.environment.cacheDir, "rendered", `${key}.json`);
  }

  private async readCached(key: string): Promise<ChartRender | undefined> {
    const text = await readFile(this.renderedPath(key), "utf8").catch(() => undefined);
    if (text === undefined) return undefined;
    try {
      return checkedRender(JSON.parse(text));
    } catch {
      return undefined;
    }
  }

  private async writeCached(key: string, render: ChartRender): Promise<void> {
    await writeAtomically(this.renderedPath(key), JSON.stringify(render));
  }

  // `helm template` in a work directory of its own.
  private async template(
    request: ChartRequest,
    tree: FileTree,
    archive: string | undefined,
  ): Promise<{ render: ChartRender; cacheable: boolean }> {
    const binary = this.environment.binary;
    if (!binary) {
      const error =
        "helm was not found: put helm (v3) on the PATH, set GITFLEET_HELM, or run scripts/build-helm.sh";
      return { render: { ok: false, error }, cacheable: false };
    }
    // Not a property of the chart: a binary that is missing or cannot run is never cached as its failure.
    if (!isExecutable(binary))
      return {
        render: { ok: false, error: `helm at ${binary} is not an executable file (GITFLEET_HELM)` },
        cacheable: false,
      };
    const work = await mkdtemp(join(tmpdir(), "gitfleet-helm-"));
    try {
      const chartDir = join(work, "chart");
      if (request.chart.kind === "directory") await writeChart(tree, request.chart, chartDir);
      const valuesFiles = await Promise.all(
        request.values.map(async (values, index) => {
          const file = join(work, `values-${index}.yaml`);
          await writeFile(file, values.text, { mode: 0o600 });
          return file;
        }),
      );
      const args = [
        "template",
        request.releaseName,
        archive ?? chartDir,
        "--namespace",
        request.namespace,
        "--kube-version",
        request.kubeVersion,
        "--include-crds",
        ...request.apiVersions.flatMap((version) => ["--api-versions", version]),
        ...valuesFiles.flatMap((file) => ["--values", file]),
      ];
      this.stats.helmRuns++;
      const result = await this.run(binary, args, work);
      if (result.code === 0 && !result.truncated && !result.timedOut && !result.limit)
        return { render: { ok: true, documents: splitTemplateOutput(result.stdout) }, cacheable: true };
      const labels: [string, string][] = [
        ...valuesFiles.map((file, index): [string, string] => [file, request.values[index]?.name ?? file]),
        [chartDir, chartLabel(request.chart)],
        [work, "<work>"],
      ];
      const error = inRepoPaths(failure(result, labels, this.environment), request.chart);
      // 126 and 127: the program could not be started (prlimit's and the shell's convention).
      const ran = result.code !== 126 && result.code !== 127;
      return {
        render: { ok: false, error },
        cacheable: ran && !result.timedOut && result.limit !== "killed",
      };
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }

  // A chart version from a repository or a registry, fetched once into the cache by its digest; a
  // failed fetch answers its error until its backoff has passed.
  private archive(
    chart: Exclude<ChartLocation, { kind: "directory" }>,
  ): Promise<{ path: string; digest: string }> {
    const ref = digestOf(JSON.stringify(chart));
    const failed = this.failedFetches.get(ref);
    if (failed && this.now() < failed.retryAt) return Promise.reject(failed.error);
    let pending = this.archives.get(ref);
    if (!pending) {
      pending = this.fetchArchive(chart, ref);
      this.archives.set(ref, pending);
      pending.then(
        () => this.failedFetches.delete(ref),
        (error: unknown) => {
          this.archives.delete(ref);
          const attempts = (failed?.attempts ?? 0) + 1;
          const wait = Math.min(FETCH_BACKOFF_MS * 2 ** (attempts - 1), MAX_FETCH_BACKOFF_MS);
          const reason = error instanceof Error ? error : new Error(String(error));
          this.failedFetches.set(ref, { error: reason, attempts, retryAt: this.now() + wait });
        },
      );
    }
    return pending;
  }

  private async fetchArchive(
    chart: Exclude<ChartLocation, { kind: "directory" }>,
    ref: string,
  ): Promise<{ path: string; digest: string }> {
    const charts = join(this.environment.cacheDir, "charts");
    const refFile = join(charts, "refs", ref);
    const known = (await readFile(refFile, "utf8").catch(() => "")).trim();
    if (/^[0-9a-f]{64}$/.test(known)) {
      const path = join(charts, `${known}.tgz`);
      if (await stat(path).catch(() => undefined)) return { path, digest: known };
    }
    this.stats.fetches++;
    const bytes = await fetchChartArchive(chart, {
      sources: this.sources,
      plainHttpHosts: this.environment.plainHttpHosts,
      ...(this.resolve ? { resolve: this.resolve } : {}),
      proxies: this.proxies,
    }).catch((error: unknown) => {
      throw new Error(
        `fetching ${chartLabel(chart)} failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
    const digest = createHash("sha256").update(bytes).digest("hex");
    const path = join(charts, `${digest}.tgz`);
    await writeAtomically(path, bytes);
    await writeAtomically(refFile, `${digest}\n`);
    return { path, digest };
  }

  private run(binary: string, args: readonly string[], work: string): Promise<ProgramResult> {
    const env = Object.create(null) as NodeJS.ProcessEnv;
    for (const name of PASSED_VARIABLES) if (process.env[name] !== undefined) env[name] = process.env[name];
    Object.assign(env, {
      HOME: work,
      HELM_CACHE_HOME: join(work, "cache"),
      HELM_CONFIG_HOME: join(work, "config"),
      HELM_DATA_HOME: join(work, "data"),
      HELM_PLUGINS: join(work, "plugins"),
      HELM_REGISTRY_CONFIG: join(work, "registry.json"),
      HELM_REPOSITORY_CONFIG: join(work, "repositories.yaml"),
      HELM_REPOSITORY_CACHE: join(work, "repository"),
      KUBECONFIG: join(work, "no-kubeconfig"),
      // Go's collector works harder near this, well before the hard bound below ends the run.
      GOMEMLIMIT: `${Math.floor((this.environment.memoryBytes * 0.9) / 2 ** 20)}MiB`,
    });
    return runProgram(binary, args, "", {
      env,
      timeoutMs: this.environment.timeoutMs,
      maxOutput: MAX_OUTPUT,
      memoryBytes: this.environment.memoryBytes,
    });
  }
}

// A chart directory of the fleet repo, written out file by file under `target`.
async function writeChart(
  tree: FileTree,
  chart: Extract<ChartLocation, { kind: "directory" }>,
  target: string,
): Promise<void> {
  for (const file of chart.files) {
    const relative = file.slice(chart.path.length + 1);
    if (relative.split("/").some((part) => part === ".." || part === "." || part === "")) continue;
    const bytes = tree.get(file);
    if (!bytes) continue;
    const path = join(target, relative);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, bytes, { mode: 0o600 });
  }
}

// What helm said, with temporary paths named as the user knows them, bounded.
function failure(
  result: ProgramResult,
  labels: readonly [string, string][],
  environment: HelmEnvironment,
): string {
  if (result.timedOut) return "helm ran past its timeout (GITFLEET_HELM_TIMEOUT)";
  if (result.truncated) return `helm printed more than ${MAX_OUTPUT} bytes`;
  if (result.limit === "memory")
    return `helm ran out of its memory bound (${environment.memoryBytes / 2 ** 20} MiB, GITFLEET_HELM_MEMORY)`;
  if (result.limit === "cpu")
    return `helm ran past its CPU-time bound (${environment.timeoutMs / 1000} s, GITFLEET_HELM_TIMEOUT)`;
  if (result.limit === "killed") return "helm was killed (past its CPU-time bound, or out of memory)";
  let text = result.stderr.trim() || `helm exited with ${result.code}`;
  for (const [path, label] of labels) text = text.split(path).join(label);
  text = text.replace(/^Error: /, "").replace(/\n+Use --debug flag to render out invalid YAML\s*$/, "");
  return bounded(text.trim());
}

// Helm names a template "<chart>/templates/x.yaml": for a chart in the fleet repo, its path there.
function inRepoPaths(message: string, chart: ChartLocation): string {
  if (chart.kind !== "directory") return message;
  return message.replace(
    /\(([A-Za-z0-9_.-]+)\/(templates|charts|crds)\//g,
    (_match, _name, dir) => `(${chart.path}/${dir}/`,
  );
}

function bounded(text: string): string {
  return text.length > MAX_ERROR ? `${text.slice(0, MAX_ERROR)}…` : text;
}

function digestOf(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

async function writeAtomically(path: string, data: string | Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(temporary, data, { mode: 0o600 });
  await rename(temporary, path);
}

// A cached render read back: its shape checked, since the cache directory is outside the repo.
function checkedRender(value: unknown): ChartRender | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const render = value as { ok?: unknown; error?: unknown; documents?: unknown };
  if (render.ok === false && typeof render.error === "string") return { ok: false, error: render.error };
  if (render.ok !== true || !Array.isArray(render.documents)) return undefined;
  const documents: RenderedDocument[] = [];
  for (const document of render.documents as unknown[]) {
    const { template, text } = (document ?? {}) as { template?: unknown; text?: unknown };
    if (typeof template !== "string" || typeof text !== "string") return undefined;
    documents.push({ template, text });
  }
  return { ok: true, documents };
}

let shared: { readonly sources: string; readonly renderer: ChartRenderer } | undefined;

/**
 * The process's renderer: helm from its environment variables (helm-environment.ts), charts fetched
 * from the sources the operator allowed (`entries`, the --chart-source URL prefixes).
 */
export function defaultChartRenderer(entries: readonly string[] = []): ChartRenderer {
  const key = entries.join("\n");
  if (shared?.sources !== key) {
    const sources = ChartSources.parse(entries);
    if ("error" in sources) throw new Error(sources.error);
    shared = { sources: key, renderer: new ChartRenderer(helmEnvironment(), { sources }) };
  }
  return shared.renderer;
}
