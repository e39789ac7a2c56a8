import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { tempDir } from "../helpers/git-repo.js";
import { clientConfig, kubectlStream, writeKubeconfig } from "../helpers/member.js";

/** Watches over HTTP: client-node's Watch, raw streams for 410 and bookmarks, and `kubectl get -w`. */
let member: SimulatedMember;
let config: k8s.KubeConfig;
let dir: string;
let cleanup: () => void;

beforeAll(async () => {
  member = await startMember({ name: "east", bookmarkIntervalMs: 50 });
  config = clientConfig(member);
  ({ dir, cleanup } = tempDir("gitfleet-watch-"));
});
afterAll(async () => {
  await member.close();
  cleanup();
});

const core = () => config.makeApiClient(k8s.CoreV1Api);

// Collects `count` events of a watch, then stops it.
async function events(
  path: string,
  query: Record<string, string | number | boolean | undefined>,
  count: number,
  during: () => Promise<void>,
) {
  const seen: { type: string; name: string; version: string }[] = [];
  let stop: (() => void) | undefined;
  let connected: Promise<unknown> = Promise.resolve();
  const done = new Promise<void>((resolve, reject) => {
    connected = new k8s.Watch(config)
      .watch(
        path,
        query,
        (type, object: k8s.KubernetesObject) => {
          seen.push({
            type,
            name: object.metadata?.name ?? "",
            version: object.metadata?.resourceVersion ?? "",
          });
          if (seen.length === count) resolve();
        },
        (error) => (error ? reject(error) : undefined),
      )
      .then((controller) => {
        stop = () => controller.abort();
      }, reject);
  });
  // The watch's answer has started (its headers came): changes made now are in it.
  await connected;
  await during();
  await done;
  stop?.();
  return seen;
}

describe("watching a simulated member", () => {
  it("streams ADDED, MODIFIED and DELETED in order, and replays from a resourceVersion", async () => {
    const start =
      (await core().listNamespacedConfigMap({ namespace: "default" })).metadata?.resourceVersion ?? "0";
    const live = await events(
      "/api/v1/namespaces/default/configmaps",
      { resourceVersion: start },
      3,
      async () => {
        await core().createNamespacedConfigMap({
          namespace: "default",
          body: { metadata: { name: "w" }, data: { a: "1" } },
        });
        await core().patchNamespacedConfigMap(
          { name: "w", namespace: "default", body: { data: { a: "2" } } },
          k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
        );
        await core().deleteNamespacedConfigMap({ name: "w", namespace: "default" });
      },
    );
    expect(live.map((e) => `${e.type} ${e.name}`)).toEqual(["ADDED w", "MODIFIED w", "DELETED w"]);
    const versions = live.map((e) => Number(e.version));
    expect(versions).toEqual([...versions].sort((a, b) => a - b));
    // A watch that starts from the same version later gets the same three changes from the log.
    const replayed = await events(
      "/api/v1/namespaces/default/configmaps",
      { resourceVersion: start },
      3,
      async () => undefined,
    );
    expect(replayed).toEqual(live);
  });

  it("answers a resourceVersion whose changes are gone with 410 Expired, and sends bookmarks when asked", async () => {
    // Push the first change out of the log: it keeps the last 10,000.
    for (let i = 0; i < 10_001; i++)
      member.api.handle({
        method: "POST",
        path: "/api/v1/namespaces/default/configmaps",
        query: new URLSearchParams(),
        contentType: "application/json",
        body: { metadata: { name: `filler-${i}` } },
      });
    const expired = await (
      await fetch(`${member.url}/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=1`)
    ).text();
    expect(JSON.parse(expired)).toMatchObject({
      type: "ERROR",
      object: { kind: "Status", code: 410, reason: "Expired" },
    });
    const response = await fetch(
      `${member.url}/api/v1/namespaces/kube-system/configmaps?watch=true&allowWatchBookmarks=true&timeoutSeconds=1`,
    );
    const body = await response.text();
    const bookmarks = body
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; object: { metadata: { resourceVersion: string } } });
    expect(bookmarks.length).toBeGreaterThan(2);
    expect(
      bookmarks.every(
        (event) => event.type === "BOOKMARK" && Number(event.object.metadata.resourceVersion) > 10_000,
      ),
    ).toBe(true);
  });

  it("works with kubectl get -w", async () => {
    const kubeconfig = writeKubeconfig(`${dir}/kubeconfig`, [member]);
    // The list first, then the change as it comes.
    const watching = kubectlStream(kubeconfig, "get", "namespaces", "-w", "-o", "name");
    await watching.seen("namespace/default\n");
    await core().createNamespace({ body: { metadata: { name: "watched" } } });
    await watching.seen("namespace/watched\n");
    expect((await watching.stop()).split("\n")).toEqual(
      expect.arrayContaining(["namespace/default", "namespace/watched"]),
    );
  });
});
