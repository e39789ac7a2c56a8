import { afterEach, describe, expect, it } from "vitest";
import { KustomizeBuilder } from "../../src/builds/kustomize-builder.js";
import { loadFleetWithBuilds } from "../../src/builds/load-with-builds.js";
import { loadFleet } from "../../src/load/load-fleet.js";
import { buildKustomization } from "../../src/manifests/kustomize/build-kustomization.js";
import { type FileTree, fileTreeFromText } from "../../src/model/file-tree.js";
import { DEFAULT_LOAD_POLICY } from "../../src/model/load-policy.js";
import { formatProblem, type Problem } from "../../src/model/problem.js";
import { readExampleRepo } from "../helpers/example-repo.js";
import { minimalFleetWith } from "../helpers/minimal-fleet.js";
import { probedWhile, startProbedServer } from "../helpers/probed-server.js";

/**
 * N5 (security audit 2): the Kustomize engine had no bound on the objects a build produced, and its
 * cost grew faster than linearly — 14 levels of bases, each including the level below twice under two
 * name prefixes, built 16,384 objects in 67 s of one core, on the controller's main thread, stalling
 * /healthz and every round. Builds now hold at most --max-app-objects objects at any step (default
 * 10,000) and do a bounded amount of work in all, gathering and renaming are linear, and the
 * controller builds kustomizations in a worker thread with a time and a heap bound.
 */

// The audit's fleet: app a whose kustomization includes level N, each level the one below twice.
function doubling(levels: number, extra: Record<string, string> = {}): Record<string, string> {
  const files: Record<string, string> = {
    "apps/a/app.yaml":
      "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: a\nspec:\n  namespace: shop\n",
    "apps/a/k/L0/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: v\n",
    "apps/a/k/L0/kustomization.yaml": "resources: [cm.yaml]\n",
    "apps/a/kustomization.yaml": `resources: [k/L${levels}]\n`,
    ...extra,
  };
  for (let i = 1; i <= levels; i++) {
    files[`apps/a/k/L${i}/p/kustomization.yaml`] = `namePrefix: p-\nresources: [../../L${i - 1}]\n`;
    files[`apps/a/k/L${i}/q/kustomization.yaml`] = `namePrefix: q-\nresources: [../../L${i - 1}]\n`;
    files[`apps/a/k/L${i}/kustomization.yaml`] = "resources: [p, q]\n";
  }
  return files;
}

const tree = (files: Record<string, string>): FileTree => fileTreeFromText(files);
const errors = (problems: readonly Problem[]) => problems.filter((p) => p.severity === "error");

// n ConfigMaps in one file, under a kustomization.
function configMaps(n: number): FileTree {
  const docs = Array.from(
    { length: n },
    (_, i) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c${i}\ndata:\n  k: v\n`,
  );
  return tree({ "k/cms.yaml": docs.join("---\n"), "k/kustomization.yaml": "resources: [cms.yaml]\n" });
}

let builder: KustomizeBuilder | undefined;
afterEach(async () => {
  await builder?.close();
  builder = undefined;
});

describe("N5: Kustomize builds are bounded", () => {
  it.each([
    ["one below the bound", 7, true],
    ["at the bound", 8, true],
    ["one past the bound", 9, false],
  ])("%s (8 objects): builds or stops with one error at the kustomization", (_name, n, fits) => {
    const result = buildKustomization(configMaps(n), "k", { maxObjects: 8 });
    if (fits) {
      expect(result.objects).toHaveLength(n);
      expect(errors(result.problems)).toEqual([]);
    } else {
      expect(result.objects).toEqual([]);
      expect(result.problems).toEqual([
        expect.objectContaining({
          file: "k/kustomization.yaml",
          code: "TOO_MANY_OBJECTS",
          message: "this kustomization builds more than 8 objects (the operator's bound, --max-app-objects)",
        }),
      ]);
    }
  });

  it("the audit's 14 levels (16,384 objects) stop at the default bound; 13 levels (8,192) build", () => {
    const fourteen = loadFleet(minimalFleetWith(doubling(14)));
    expect(errors(fourteen.problems).map(formatProblem)).toEqual([
      "apps/a/kustomization.yaml:1:1: error: this kustomization builds more than 10000 objects (the operator's bound, --max-app-objects) [TOO_MANY_OBJECTS]",
    ]);
    const thirteen = buildKustomization(tree(doubling(13)), "apps/a");
    expect(thirteen.objects).toHaveLength(8192);
  });

  it("bases included over and over stop at the work bound, whatever the objects at each step", () => {
    // 200 levels each including the one below: one object, passed up 200 times.
    const files: Record<string, string> = {
      "L0/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
      "L0/kustomization.yaml": "resources: [cm.yaml]\n",
    };
    for (let i = 1; i <= 200; i++)
      files[`L${i}/kustomization.yaml`] = `namePrefix: x-\nresources: [../L${i - 1}]\n`;
    expect(buildKustomization(tree(files), "L200", { maxObjects: 10, work: 1000 }).objects).toHaveLength(1);
    const stopped = buildKustomization(tree(files), "L200", { maxObjects: 10, work: 150 });
    expect(stopped.problems).toEqual([
      expect.objectContaining({
        file: "L200/kustomization.yaml",
        message: expect.stringContaining("handles more than 150 objects in all"),
      }),
    ]);
  });

  it("the operator's --max-app-objects bounds apps of plain manifests too: at the bound, and one past it", () => {
    const files = {
      "apps/big/app.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: big\nspec:\n  namespace: shop\n",
      "apps/big/cms.yaml": Array.from(
        { length: 4 },
        (_, i) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c${i}\n`,
      ).join("---\n"),
    };
    const policy = (maxAppObjects: number) => ({ ...DEFAULT_LOAD_POLICY, maxAppObjects });
    expect(errors(loadFleet(minimalFleetWith(files), undefined, undefined, policy(4)).problems)).toEqual([]);
    expect(
      errors(loadFleet(minimalFleetWith(files), undefined, undefined, policy(3)).problems).map(formatProblem),
    ).toEqual([
      expect.stringMatching(
        /^apps\/big\/cms\.yaml:\d+:1: error: app big has more than 3 objects \(the operator's bound, --max-app-objects\) \[TOO_MANY_OBJECTS\]$/,
      ),
    ]);
  });

  it("the worker builds what the engine builds here, and answers from its cache until a file it read changes", async () => {
    builder = new KustomizeBuilder();
    const example = await readExampleRepo();
    const here = loadFleet(example);
    const there = await loadFleetWithBuilds(example, { kustomize: builder });
    expect(JSON.stringify(there.model)).toBe(JSON.stringify(here.model));
    const built = builder.stats.builds;
    expect(built).toBeGreaterThan(0);
    await loadFleetWithBuilds(example, { kustomize: builder });
    expect(builder.stats.builds).toBe(built);
    const files = doubling(2);
    await loadFleetWithBuilds(minimalFleetWith(files), { kustomize: builder });
    const before = builder.stats.builds;
    files["apps/a/k/L0/cm.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d\n";
    const changed = await loadFleetWithBuilds(minimalFleetWith(files), { kustomize: builder });
    expect(builder.stats.builds).toBe(before + 1);
    expect(
      changed.model?.apps
        .find((a) => a.name === "a")
        ?.resources.map((r) => r.name)
        .sort(),
    ).toEqual(["p-p-d", "p-q-d", "q-p-d", "q-q-d"]);
  });

  it("a build past its time bound is ended, reported at its kustomization, and not tried again before its backoff", async () => {
    let now = 1_000_000;
    builder = new KustomizeBuilder({ timeoutMs: 300, now: () => now });
    const fleet = minimalFleetWith(doubling(13));
    const load = () =>
      loadFleetWithBuilds(fleet, { kustomize: builder }, undefined, {
        ...DEFAULT_LOAD_POLICY,
        maxAppObjects: 20_000,
      });
    const first = await load();
    expect(errors(first.problems).map(formatProblem)).toEqual([
      "apps/a/kustomization.yaml:1:1: error: building apps/a/ took longer than 0.3 s (the operator's bound); it is tried again later [RENDER_FAILED]",
    ]);
    const builds = builder?.stats.builds;
    await load();
    expect(builder?.stats.builds).toBe(builds);
    now += 60_000;
    await load();
    expect(builder?.stats.builds).toBe((builds ?? 0) + 1);
  });

  it("a build that runs out of the worker's heap is an error; the next build gets a new worker", async () => {
    builder = new KustomizeBuilder({ memoryMb: 16 });
    const big = Array.from(
      { length: 3000 },
      (_, i) =>
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c${i}\ndata:\n  k: "${"x".repeat(2000)}"\n`,
    ).join("---\n");
    const files = {
      "apps/a/app.yaml": "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: a\n",
      "apps/a/cms.yaml": big,
      "apps/a/kustomization.yaml": "namePrefix: p-\nresources: [cms.yaml]\n",
    };
    const loaded = await loadFleetWithBuilds(minimalFleetWith(files), { kustomize: builder });
    expect(errors(loaded.problems).map(formatProblem)).toEqual([
      expect.stringContaining("building apps/a/ ran out of its memory bound (16 MiB)"),
    ]);
    const small = { ...files, "apps/a/cms.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n" };
    expect(
      errors((await loadFleetWithBuilds(minimalFleetWith(small), { kustomize: builder })).problems),
    ).toEqual([]);
  });

  it("the controller's endpoint answers while a large build runs in the worker", async () => {
    builder = new KustomizeBuilder();
    const server = await startProbedServer();
    try {
      const { result: loaded, answered } = await probedWhile(
        server,
        loadFleetWithBuilds(minimalFleetWith(doubling(14)), { kustomize: builder }),
      );
      expect(errors(loaded.problems).map((p) => p.code)).toEqual(["TOO_MANY_OBJECTS"]);
      expect(answered.length).toBeGreaterThan(1);
      expect(answered.every((status) => status === 200)).toBe(true);
    } finally {
      await server.close();
    }
  });
});
