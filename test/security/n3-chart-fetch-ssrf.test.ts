import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadFleetWithBuilds } from "../../src/builds/load-with-builds.js";
import type { Resolver } from "../../src/helm/bounded-fetch.js";
import { ChartRenderer } from "../../src/helm/chart-renderer.js";
import { ChartSources } from "../../src/helm/chart-sources.js";
import { helmEnvironment } from "../../src/helm/helm-environment.js";
import { formatProblem } from "../../src/model/problem.js";
import { gitfleetAsync } from "../helpers/cli.js";
import { createRepo } from "../helpers/git-repo.js";
import { helm, helmBinary } from "../helpers/helm.js";
import { minimalFleetWith } from "../helpers/minimal-fleet.js";

/**
 * N3 (security audit 2): `spec.helm.repo` could be any URL — loopback, link-local metadata, in-cluster
 * Services — helm followed an index's chart URLs to any other host and followed redirects, parts of
 * the answers came back in the validation error, and failed fetches were repeated on every load.
 * Charts are now fetched by gitfleet itself through one policy: the operator's allow-list
 * (--chart-source), no loopback, link-local, private or cluster-internal address unless listed, a
 * chart URL or redirect to another host only when listed, sizes bounded before parsing, errors that
 * say what was refused and never what a server answered, and a backoff after a failure.
 */

const CHART = fileURLToPath(new URL("../fixtures/helm/shop", import.meta.url));
let binary: string;
let work: string;
let archive: Buffer;
const servers: Server[] = [];

/** A loopback listener that records what it is asked and answers with `handle`. */
async function listener(handle: (path: string, response: ServerResponse) => void) {
  const requests: string[] = [];
  let sent = 0;
  const server = createServer((request, response) => {
    requests.push(request.url ?? "");
    const write = response.write.bind(response);
    response.write = ((chunk: Buffer | string, ...rest: never[]) => {
      sent += chunk.length;
      return write(chunk, ...rest);
    }) as typeof response.write;
    handle(request.url ?? "", response);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, requests, sent: () => sent };
}

// A chart repository whose index names the archive at `archiveUrl` (relative to the repository by default).
function repository(archiveUrl = "shop-0.3.1.tgz", extra = "") {
  return (path: string, response: ServerResponse) => {
    if (path.endsWith("/index.yaml"))
      return void response
        .writeHead(200)
        .end(`apiVersion: v1\nentries:\n  shop:\n  - version: 0.3.1\n    urls: [${archiveUrl}]\n${extra}`);
    if (path.endsWith("/shop-0.3.1.tgz")) return void response.writeHead(200).end(archive);
    response.writeHead(404).end('{"secret":"AKIA-not-a-real-key"}');
  };
}

const app = (repo: string) =>
  minimalFleetWith({
    "apps/shop/app.yaml": `apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: shop\nspec:\n  namespace: shop\n  helm:\n    repo: ${repo}\n    chart: shop\n    version: 0.3.1\n`,
  });

function renderer(allowed: readonly string[] = [], options: { now?: () => number; resolve?: Resolver } = {}) {
  const sources = ChartSources.parse(allowed);
  if ("error" in sources) throw new Error(sources.error);
  const environment = helmEnvironment({
    GITFLEET_HELM: binary,
    GITFLEET_CACHE_DIR: mkdtempSync(join(work, "c-")),
  });
  return new ChartRenderer(environment, { sources, ...options });
}

async function problems(repo: string, charts: ChartRenderer): Promise<string> {
  return errorsOf(await loadFleetWithBuilds(app(repo), { charts: charts }));
}

const errorsOf = (loaded: Awaited<ReturnType<typeof loadFleetWithBuilds>>) =>
  loaded.problems
    .filter((p) => p.severity === "error")
    .map(formatProblem)
    .join("\n");

beforeAll(async () => {
  binary = helmBinary();
  work = mkdtempSync(join(tmpdir(), "gitfleet-n3-"));
  mkdirSync(join(work, "pkg"));
  await helm(binary, join(work, "home"), ["package", CHART, "--destination", join(work, "pkg")]);
  archive = readFileSync(join(work, "pkg", "shop-0.3.1.tgz"));
}, 20 * 60_000);
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((server) => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    }),
  );
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("N3: chart fetches go through one policy", () => {
  it("the audit's loopback metadata URL: refused without a request, nothing of an answer in the error", async () => {
    const metadata = await listener((_path, response) => response.writeHead(200).end('{"secret":"AKIA"}'));
    const said = await problems(`${metadata.url}/latest/meta-data/iam`, renderer());
    expect(said).toMatch(
      /apps\/shop\/app\.yaml:\d+:\d+: error: \/spec\/helm\/chart: .*chart repository http:\/\/127\.0\.0\.1:\d+: refused: http:\/\/127\.0\.0\.1:\d+ is a loopback address, which gitfleet does not fetch from unless the operator lists it \(--chart-source\) \[HELM_RENDER_FAILED\]/,
    );
    expect(said).not.toContain("secret");
    expect(metadata.requests).toEqual([]);
  });

  it.each([
    ["link-local metadata", "http://169.254.169.254/latest/meta-data", "is a link-local address"],
    ["a private address", "https://10.0.0.7/charts", "is a private address"],
    ["IPv4-mapped loopback", "http://[::ffff:127.0.0.1]:8080/charts", "is a loopback address"],
    [
      "a cluster Service",
      "http://chartmuseum.tools.svc.cluster.local:8080",
      "is a cluster-internal or local name",
    ],
    ["a single-label name", "http://metadata/computeMetadata/v1", "is a single-label name"],
    ["localhost with a trailing dot", "http://localhost./charts", "is a single-label name"],
    ["a name under localhost", "http://evil.localhost/charts", "is a cluster-internal or local name"],
  ])("%s is refused by name or address before any connection", async (_name, repo, reason) => {
    expect(await problems(repo, renderer())).toContain(reason);
  });

  it("a public name that resolves to a private address is refused at the connection, never connected", async () => {
    const target = await listener(repository());
    const port = new URL(target.url).port;
    const resolve: Resolver = (_host, _options, callback) =>
      callback(null, [{ address: "127.0.0.1", family: 4 }]);
    const said = await problems(`http://charts.example.com:${port}`, renderer([], { resolve }));
    expect(said).toContain("refused: http://charts.example.com:");
    expect(said).toContain("is a loopback address");
    expect(target.requests).toEqual([]);
  });

  it("an allow-listed loopback repository is fetched: the index, then the archive it names", async () => {
    const repo = await listener(repository());
    const loaded = await loadFleetWithBuilds(app(repo.url), { charts: renderer([repo.url]) });
    expect(errorsOf(loaded)).toBe("");
    expect(repo.requests).toEqual(["/index.yaml", "/shop-0.3.1.tgz"]);
  });

  it("an allow-list that does not name the repository refuses it", async () => {
    const repo = await listener(repository());
    expect(await problems(repo.url, renderer(["https://charts.example.com"]))).toContain(
      "is not among the chart sources the operator allows (--chart-source)",
    );
    expect(repo.requests).toEqual([]);
  });

  it("an index naming an archive on another host is refused unless that host is listed too", async () => {
    const elsewhere = await listener(repository());
    const repo = await listener(repository(`${elsewhere.url}/computeMetadata/v1/shop-0.3.1.tgz`));
    const said = await problems(repo.url, renderer([repo.url]));
    expect(said).toContain("the archive its index names: refused:");
    expect(said).toContain("is another host than the chart source's");
    expect(elsewhere.requests).toEqual([]);
    const both = await loadFleetWithBuilds(app(repo.url), { charts: renderer([repo.url, elsewhere.url]) });
    expect(errorsOf(both)).toBe("");
    expect(elsewhere.requests).toEqual(["/computeMetadata/v1/shop-0.3.1.tgz"]);
  });

  it("a redirect to another host is refused; one within the repository is followed", async () => {
    const elsewhere = await listener(repository());
    const redirecting = await listener((path, response) => {
      if (path === "/index.yaml")
        return void response.writeHead(302, { location: `${elsewhere.url}/index.yaml` }).end();
      response.writeHead(404).end();
    });
    expect(await problems(redirecting.url, renderer([redirecting.url]))).toContain(
      "redirected, and refused:",
    );
    expect(elsewhere.requests).toEqual([]);
    const inside = await listener((path, response) => {
      if (path === "/index.yaml")
        return void response.writeHead(301, { location: "/stable/index.yaml" }).end();
      repository()(path, response);
    });
    const loaded = await loadFleetWithBuilds(app(inside.url), { charts: renderer([inside.url]) });
    expect(errorsOf(loaded)).toBe("");
    expect(inside.requests.slice(0, 2)).toEqual(["/index.yaml", "/stable/index.yaml"]);
  });

  it.each([
    ["declared in Content-Length", true],
    ["streamed without a length", false],
  ])("a 600 MiB index.yaml (%s) is refused at 32 MiB, before parsing", async (_name, declared) => {
    const huge = await listener((_path, response) => {
      response.writeHead(200, declared ? { "content-length": String(600 * 2 ** 20) } : {});
      const chunk = Buffer.alloc(2 ** 20, "a");
      let left = 600;
      const pump = () => {
        while (left > 0 && response.write(chunk)) left--;
        if (left === 0) response.end();
      };
      response.on("drain", pump);
      response.on("close", () => {
        left = 0;
      });
      pump();
    });
    const said = await problems(huge.url, renderer([huge.url]));
    expect(said).toContain(`is larger than ${32 * 2 ** 20} bytes`);
    expect(huge.sent()).toBeLessThan(100 * 2 ** 20);
  });

  it("an answer that is not an index says so, without a word of it", async () => {
    const json = await listener((_path, response) =>
      response.writeHead(200).end('{"secret":"AKIA-not-a-real-key"}'),
    );
    const said = await problems(json.url, renderer([json.url]));
    expect(said).toContain("its index.yaml is not a chart repository index (no entries)");
    expect(said).not.toContain("AKIA");
    const missing = await listener((_path, response) => response.writeHead(404).end("<h1>secret page</h1>"));
    expect(await problems(missing.url, renderer([missing.url]))).toMatch(
      /answered 404 \[HELM_RENDER_FAILED\]$/,
    );
  });

  it("an archive that does not match the index's digest is refused", async () => {
    const repo = await listener(repository("shop-0.3.1.tgz", `    digest: ${"0".repeat(64)}\n`));
    expect(await problems(repo.url, renderer([repo.url]))).toContain(
      "does not have the digest its index gives",
    );
  });

  it("a failed fetch is not repeated on every load: it backs off, then tries again", async () => {
    let now = 1_000_000;
    const down = await listener((_path, response) => response.writeHead(503).end());
    const charts = renderer([down.url], { now: () => now });
    for (let i = 0; i < 3; i++) expect(await problems(down.url, charts)).toContain("answered 503");
    expect(down.requests).toEqual(["/index.yaml"]);
    now += 29_999;
    await problems(down.url, charts);
    expect(down.requests).toHaveLength(1);
    now += 1;
    await problems(down.url, charts);
    expect(down.requests).toHaveLength(2);
    // The second failure waits twice as long.
    now += 59_999;
    await problems(down.url, charts);
    expect(down.requests).toHaveLength(2);
    now += 1;
    await problems(down.url, charts);
    expect(down.requests).toHaveLength(3);
  });

  it("gitfleet validate takes the allow-list from --chart-source and GITFLEET_CHART_SOURCES", async () => {
    const repo = await listener(repository());
    const dir = join(work, "fleet");
    mkdirSync(dir);
    createRepo(dir, app(repo.url));
    const refused = await gitfleetAsync(["validate", dir], {
      env: { GITFLEET_CACHE_DIR: join(work, "cli-cache") },
    });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain("is a loopback address");
    const flag = await gitfleetAsync(["validate", dir, "--chart-source", repo.url], {
      env: { GITFLEET_CACHE_DIR: join(work, "cli-cache-2") },
    });
    expect(flag.code).toBe(0);
    const variable = await gitfleetAsync(["validate", dir], {
      env: {
        GITFLEET_CACHE_DIR: join(work, "cli-cache-3"),
        GITFLEET_CHART_SOURCES: `https://x.example.com,${repo.url}`,
      },
    });
    expect(variable.code).toBe(0);
    const bad = await gitfleetAsync(["validate", dir, "--chart-source", "ftp://x"]);
    expect(bad.code).toBe(64);
    expect(bad.stderr).toContain("is not a chart source's scheme");
  });
});
