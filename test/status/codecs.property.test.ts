import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { groupOf } from "../../src/apimachinery/kinds.js";
import { identityOf } from "../../src/model/identity.js";
import { sourcePosition } from "../../src/reconcile/restore-state.js";
import { readEmittedYaml } from "../../src/render/yaml-reader.js";
import { agentReportText, readAgentReport } from "../../src/status/observed-status.js";
import { SOURCE_STATUS_PATH, sourceStatusText } from "../../src/status/status-files.js";
import {
  type InventoryEntry,
  inventoryData,
  inventoryFromData,
  inventoryFromStatus,
  inventoryStatusText,
} from "../../src/sync/inventory.js";
import type { ClusterSyncResult, ObjectResult } from "../../src/sync/sync-result.js";

/** Every status file gitfleet writes reads back as what was written: decode(encode(x)) = x. */
const name = fc.stringMatching(/^[a-z]([a-z0-9-]{0,10}[a-z0-9])?$/);
const commit = fc.stringMatching(/^[0-9a-f]{40}$/);
const count = fc.nat({ max: 10_000 });
const apiVersion = fc.constantFrom("v1", "apps/v1", "batch/v1", "apps.kruise.io/v1beta1", "example.com/v1");
const kind = fc.constantFrom("Deployment", "ConfigMap", "CloneSet", "Service", "Job");

const entry: fc.Arbitrary<InventoryEntry> = fc
  .record({
    apiVersion,
    kind,
    namespace: fc.option(name, { nil: undefined }),
    name,
    app: name,
    uid: fc.stringMatching(/^[a-f0-9-]{0,36}$/),
    digest: fc.stringMatching(/^[0-9a-f]{64}$/),
    adopted: fc.boolean(),
  })
  .map(({ adopted, namespace, ...rest }) => ({
    ...rest,
    namespace,
    identity: identityOf(groupOf(rest.apiVersion), rest.kind, namespace, rest.name),
    ...(adopted ? { adopted: true } : {}),
  }));
const inventory = fc
  .array(entry, { maxLength: 20 })
  .map((entries) => new Map(entries.map((e) => [e.identity, e])));

describe("status codecs round-trip", () => {
  it("status/inventory/<cluster>.yaml", () => {
    fc.assert(
      fc.property(
        name,
        commit,
        inventory,
        fc.option(commit, { nil: undefined }),
        (cluster, source, inv, base) => {
          const read = inventoryFromStatus(readEmittedYaml(inventoryStatusText(cluster, source, inv, base)));
          expect(read).toEqual({ cluster, pruneBase: base, inventory: inv });
        },
      ),
    );
  });

  it("the member's inventory ConfigMap data", () => {
    fc.assert(
      fc.property(
        name,
        commit,
        inventory,
        fc.option(commit, { nil: undefined }),
        (cluster, source, inv, base) => {
          const data = inventoryData({ cluster, sourceCommit: source, pruneBase: base }, inv);
          expect(inventoryFromData(data)).toEqual({ cluster, pruneBase: base, inventory: inv });
        },
      ),
    );
  });

  it("status/source.yaml's position", () => {
    fc.assert(
      fc.property(commit, fc.option(commit, { nil: undefined }), fc.boolean(), (source, rendered, valid) => {
        const text = sourceStatusText({
          sourceCommit: source,
          renderedCommit: rendered,
          valid,
          problems: [],
        });
        expect(sourcePosition(new Map([[SOURCE_STATUS_PATH, text]]))).toEqual({
          sourceCommit: source,
          renderedCommit: rendered,
        });
      }),
    );
  });

  it("an agent's report: each workload's replicas as numbers", () => {
    const workload = fc.record({
      app: name,
      apiVersion,
      kind,
      namespace: name,
      name,
      desired: count,
      ready: count,
      unschedulable: count,
      scaledByHpa: fc.boolean(),
    });
    fc.assert(
      fc.property(name, fc.array(workload, { maxLength: 12 }), (cluster, workloads) => {
        const objects: ObjectResult[] = workloads.map((w) => ({
          identity: identityOf(groupOf(w.apiVersion), w.kind, w.namespace, w.name),
          app: w.app,
          action: "unchanged",
          health: { status: "Healthy" },
          desiredReplicas: w.desired,
          readyReplicas: w.ready,
          unschedulableReplicas: w.unschedulable,
          ...(w.scaledByHpa ? { scaledByHpa: true } : {}),
        }));
        const result: ClusterSyncResult = {
          cluster,
          sourceCommit: "a".repeat(40),
          reachable: true,
          objects,
          pruned: [],
          retained: [],
          inventory: new Map(),
        };
        const report = readAgentReport(readEmittedYaml(agentReportText(result, "agent@north")));
        const expected = Object.fromEntries(
          objects.map((o) => [
            o.identity,
            {
              desired: o.desiredReplicas,
              ready: o.readyReplicas,
              unschedulable: o.unschedulableReplicas,
              ...(o.scaledByHpa ? { scaledByHpa: true } : {}),
            },
          ]),
        );
        expect(report?.cluster).toBe(cluster);
        expect(report?.replicas).toEqual(expected);
      }),
    );
  });
});
