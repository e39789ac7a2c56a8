import { beforeAll, describe, expect, it } from "vitest";
import type { LoadResult } from "../../src/load/load-fleet.js";
import type { FileTree } from "../../src/model/file-tree.js";
import { loadWithCharts, readExampleRepo } from "../helpers/example-repo.js";

/** The example fleet is what the demo, the golden tests and the docs build on: it must stay complete. */
describe("example-repo", () => {
  let tree: FileTree;
  let result: LoadResult;
  beforeAll(async () => {
    tree = await readExampleRepo();
    result = await loadWithCharts(tree);
  });

  it("is valid with no warnings", () => {
    expect(result.problems).toEqual([]);
    expect(result.model).toBeDefined();
  });

  it("has clusters in two regions, three providers, a tainted GPU cluster and a cordoned one", () => {
    const clusters = result.model?.clusters ?? [];
    expect(clusters.length).toBeGreaterThanOrEqual(5);
    expect(new Set(clusters.map((c) => c.spec.region))).toEqual(new Set(["us-east", "eu-west"]));
    expect(new Set(clusters.map((c) => c.spec.provider))).toEqual(new Set(["idc", "aws", "gcp"]));
    expect(clusters.filter((c) => c.spec.provider === "idc").length).toBeGreaterThanOrEqual(2);
    expect(clusters.some((c) => c.spec.taints?.some((t) => t.key === "gpu"))).toBe(true);
    expect(clusters.some((c) => c.spec.unschedulable)).toBe(true);
    expect(clusters.some((c) => c.metadata.labels?.env === "test")).toBe(true);
  });

  it("exercises every division mode and overrider", () => {
    const model = result.model;
    const scheduling = (name: string) =>
      model?.placements.find((p) => p.metadata.name === name)?.spec.replicaScheduling;
    expect(scheduling("web")?.weightPreference?.staticWeightList?.length).toBeGreaterThan(0);
    expect(scheduling("arena")?.weightPreference?.dynamicWeight).toBe("AvailableReplicas");
    expect(scheduling("mysql")?.divisionPreference).toBe("Aggregated");
    expect(scheduling("platform")?.type).toBe("Duplicated");
    const overriders = model?.overrides
      .flatMap((o) => o.spec.overrideRules.map((r) => Object.keys(r.overriders)))
      .flat();
    expect(new Set(overriders)).toEqual(
      new Set(["imageOverrider", "labelsOverrider", "jsonPatch", "annotationsOverrider", "mergePatch"]),
    );
    expect(model?.migrations[0]?.spec.batches.map((b) => b.name)).toEqual(["test", "staging", "prod"]);
    expect(model?.cronScales.length).toBe(1);
    expect(model?.federatedHPAs.map((h) => h.spec.metrics?.map((m) => m.type))).toEqual([
      ["External"],
      ["Resource"],
    ]);
    expect(
      model?.placements
        .find((p) => p.metadata.name === "orders-worker")
        ?.spec.overflow?.tiers.map((t) => t.name),
    ).toEqual(["onprem", "cloud"]);
  });

  it("has a game server of about a dozen resources around an OpenKruise CloneSet", () => {
    const arena = result.model?.apps.find((a) => a.name === "arena");
    const kinds = arena?.resources.map((r) => r.kind) ?? [];
    expect(kinds.length).toBeGreaterThanOrEqual(12);
    for (const kind of [
      "CloneSet",
      "CustomResourceDefinition",
      "ConfigMap",
      "Secret",
      "PersistentVolumeClaim",
      "Service",
      "ServiceAccount",
    ]) {
      expect(kinds).toContain(kind);
    }
    expect(result.model?.interpreters[0]?.spec.target.kind).toBe("CloneSet");
  });

  it("holds only obviously fake Secret values", () => {
    const decoder = new TextDecoder();
    const secrets = (result.model?.apps ?? []).flatMap((a) => a.resources).filter((r) => r.kind === "Secret");
    expect(secrets.length).toBeGreaterThan(0);
    for (const secret of secrets) {
      const values = [
        ...Object.values((secret.object.stringData ?? {}) as Record<string, string>),
        ...Object.values((secret.object.data ?? {}) as Record<string, string>).map((v) =>
          decoder.decode(Buffer.from(v, "base64")),
        ),
      ];
      for (const value of values) expect(value).toMatch(/example|fake|not-a-real/);
    }
  });
});
