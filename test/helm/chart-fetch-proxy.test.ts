import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadFleetWithBuilds } from "../../src/builds/load-with-builds.js";
import { createCertificateAuthority, issueCertificate } from "../../src/credentials/x509.js";
import { proxiesOf, type Resolver } from "../../src/helm/bounded-fetch.js";
import { ChartRenderer } from "../../src/helm/chart-renderer.js";
import { ChartSources } from "../../src/helm/chart-sources.js";
import { helmEnvironment } from "../../src/helm/helm-environment.js";
import { formatProblem } from "../../src/model/problem.js";
import { gitfleetAsync } from "../helpers/cli.js";
import { startForwardProxy } from "../helpers/forward-proxy.js";
import { createRepo } from "../helpers/git-repo.js";
import { helm, helmBinary } from "../helpers/helm.js";
import { minimalFleetWith } from "../helpers/minimal-fleet.js";

/**
 * Chart fetches through the operator's egress proxy (HTTPS_PROXY, HTTP_PROXY, NO_PROXY), as helm
 * used to make them: plain HTTP by absolute URL, HTTPS through a CONNECT tunnel with TLS to the
 * host's name inside it. The policy still decides first — a refused source never reaches the proxy —
 * and the proxy is asked for the address gitfleet resolved and checked, never the name.
 */

const CHART = fileURLToPath(new URL("../fixtures/helm/shop", import.meta.url));
let binary: string;
let work: string;
let archive: Buffer;
const servers: Server[] = [];
const closing: (() => Promise<void>)[] = [];

function repository(request: IncomingMessage, response: ServerResponse): void {
  if (request.url?.endsWith("/index.yaml"))
    return void response
      .writeHead(200)
      .end("apiVersion: v1\nentries:\n  shop:\n  - version: 0.3.1\n    urls: [shop-0.3.1.tgz]\n");
  if (request.url?.endsWith("/shop-0.3.1.tgz")) return void response.writeHead(200).end(archive);
  response.writeHead(404).end();
}

async function listen(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

const app = (repo: string) =>
  minimalFleetWith({
    "apps/shop/app.yaml": `apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: shop\nspec:\n  namespace: shop\n  helm:\n    repo: ${repo}\n    chart: shop\n    version: 0.3.1\n`,
  });

async function errors(repo: string, allowed: string[], env: Record<string, string>, resolve?: Resolver) {
  const sources = ChartSources.parse(allowed);
  if ("error" in sources) throw new Error(sources.error);
  const environment = helmEnvironment({
    GITFLEET_HELM: binary,
    GITFLEET_CACHE_DIR: mkdtempSync(join(work, "c-")),
  });
  const charts = new ChartRenderer(environment, {
    sources,
    proxies: proxiesOf(env),
    ...(resolve ? { resolve } : {}),
  });
  const loaded = await loadFleetWithBuilds(app(repo), { charts });
  return loaded.problems.filter((p) => p.severity === "error").map(formatProblem);
}

beforeAll(async () => {
  binary = helmBinary();
  work = mkdtempSync(join(tmpdir(), "gitfleet-proxy-"));
  mkdirSync(join(work, "pkg"));
  await helm(binary, join(work, "home"), ["package", CHART, "--destination", join(work, "pkg")]);
  archive = readFileSync(join(work, "pkg", "shop-0.3.1.tgz"));
}, 20 * 60_000);
afterEach(async () => {
  await Promise.all(closing.splice(0).map((close) => close()));
  await Promise.all(
    servers.splice(0).map((server) => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    }),
  );
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("chart fetches through the operator's proxy", () => {
  it("plain HTTP goes by absolute URL through HTTP_PROXY; NO_PROXY goes direct", async () => {
    const port = await listen(createHttpServer(repository));
    const proxy = await startForwardProxy();
    closing.push(proxy.close);
    const repo = `http://127.0.0.1:${port}`;
    expect(await errors(repo, [repo], { HTTP_PROXY: proxy.url })).toEqual([]);
    expect(proxy.requests).toEqual([`GET ${repo}/index.yaml`, `GET ${repo}/shop-0.3.1.tgz`]);
    expect(await errors(repo, [repo], { HTTP_PROXY: proxy.url, NO_PROXY: "localhost,127.0.0.1" })).toEqual(
      [],
    );
    expect(proxy.requests).toHaveLength(2);
  });

  it("a refused source never reaches the proxy", async () => {
    const proxy = await startForwardProxy();
    closing.push(proxy.close);
    const said = await errors("http://127.0.0.1:9/charts", [], { HTTP_PROXY: proxy.url });
    expect(said.join("\n")).toContain("is a loopback address");
    expect(proxy.requests).toEqual([]);
  });

  it("the proxy is asked for the address gitfleet resolved and checked, never the name", async () => {
    const port = await listen(createHttpServer(repository));
    const proxy = await startForwardProxy();
    closing.push(proxy.close);
    const resolve: Resolver = (_host, _options, callback) =>
      callback(null, [{ address: "127.0.0.1", family: 4 }]);
    const repo = `http://charts.example.com:${port}`;
    // Listed, so any address it resolves to is allowed; unlisted, a loopback answer is refused first.
    expect(await errors(repo, [repo], { HTTP_PROXY: proxy.url }, resolve)).toEqual([]);
    expect(proxy.requests[0]).toBe(`GET http://127.0.0.1:${port}/index.yaml`);
    expect((await errors(repo, [], { HTTP_PROXY: proxy.url }, resolve)).join("\n")).toContain(
      "is a loopback address",
    );
    expect(proxy.requests).toHaveLength(2);
  });

  it("HTTPS goes through a CONNECT tunnel with TLS to the host's name (gitfleet validate, HTTPS_PROXY)", async () => {
    const now = Date.now();
    const ca = await createCertificateAuthority(
      { commonName: "test-ca", usage: "ca", validityMs: 3_600_000 },
      now,
    );
    const serving = await issueCertificate(
      { commonName: "localhost", names: ["localhost"], usage: "server", validityMs: 3_600_000 },
      ca,
      now,
    );
    const port = await listen(
      createHttpsServer(
        { cert: serving.certificatePem, key: serving.key.privatePem },
        repository,
      ) as unknown as Server,
    );
    const proxy = await startForwardProxy();
    closing.push(proxy.close);
    writeFileSync(join(work, "ca.pem"), ca.certificatePem);
    const repo = `https://localhost:${port}`;
    const dir = join(work, "fleet");
    mkdirSync(dir);
    createRepo(dir, app(repo));
    const result = await gitfleetAsync(["validate", dir, "--chart-source", repo], {
      env: {
        HTTPS_PROXY: proxy.url,
        NODE_EXTRA_CA_CERTS: join(work, "ca.pem"),
        GITFLEET_CACHE_DIR: join(work, "cli-cache"),
        GITFLEET_HELM: binary,
      },
    });
    expect(result.stdout).toContain("valid");
    expect(result.code).toBe(0);
    expect(proxy.requests.every((r) => /^CONNECT (127\.0\.0\.1|\[::1\]):\d+$/.test(r))).toBe(true);
    expect(proxy.requests).toHaveLength(2);
  });
});
