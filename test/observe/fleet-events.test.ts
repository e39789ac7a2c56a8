import { describe, expect, it } from "vitest";
import { fleetEvents, type StatusCommitChange } from "../../src/observe/fleet-events.js";
import { statusYaml } from "../../src/status/status-yaml.js";

const COMMIT = "c".repeat(40);
const SOURCE = "5".repeat(40);
const TIME = "2026-12-01T10:00:00.000Z";
const trailers = (event: string) =>
  `\n\nSource-Commit: ${SOURCE}\nGitfleet-Controller: gitfleet@ctrl-0\nGitfleet-Event: ${event}\n`;
const change = (message: string, files: StatusCommitChange["files"] = []): StatusCommitChange => ({
  commit: COMMIT,
  time: TIME,
  message,
  files,
});
// Status files as the writer emits them: a rendered part, then the observed block.
const withObserved = (observed: object) => statusYaml({ objects: ["apps.Deployment.web"], observed });
const migration = (batches: object[]) => statusYaml({ migration: "legacy", batches });
const credentials = (records: Record<string, { fingerprint: string; notAfter: string }>) =>
  withObserved({ hostedControlPlanes: { tenant: { credentials: records } } });
const ADMIN = { fingerprint: "aa", notAfter: "2026-12-02T00:00:00Z" };
// A host's record of its hosted clusters' replicated etcds: members and their alarms.
const etcds = (alarms: Record<string, Record<string, string | undefined>>) =>
  withObserved({
    hostedControlPlanes: Object.fromEntries(
      Object.entries(alarms).map(([cluster, members]) => [
        cluster,
        {
          credentials: {},
          etcd: {
            name: `gitfleet-cp-${cluster}/etcd`,
            members: Object.fromEntries(
              Object.entries(members).map(([m, alarm]) => [m, { ready: true, ...(alarm ? { alarm } : {}) }]),
            ),
          },
        },
      ]),
    ),
  });

describe("fleetEvents", () => {
  it.each([
    {
      name: "an invalid source commit",
      change: change(
        `Source 5555555 is invalid: 2 errors; clusters keep what they run${trailers("invalid")}`,
      ),
      events: [["sourceInvalid", "Source 5555555 is invalid: 2 errors; clusters keep what they run"]],
    },
    {
      name: "a failover",
      change: change(`failover: cluster west Unreachable for 30s; web 2 → east +2${trailers("failover")}`),
      events: [["failover", "failover: cluster west Unreachable for 30s; web 2 → east +2"]],
    },
    {
      name: "an autoscaling step",
      change: change(`autoscale: web 4 → 6 (cpu 90% of 60%)${trailers("scale")}`),
      events: [["autoscale", "autoscale: web 4 → 6 (cpu 90% of 60%)"]],
    },
    {
      name: "a cluster going NotReady, another Ready again, a third seen Ready for the first time, a fourth still NotReady",
      change: change(`sync: east Healthy${trailers("sync")}`, [
        {
          path: "status/clusters/west.yaml",
          before: withObserved({ condition: { ready: true, since: "x" } }),
          after: withObserved({
            condition: { ready: false, reason: "Unreachable", since: "y", lastError: "refused" },
          }),
        },
        {
          path: "status/clusters/east.yaml",
          before: withObserved({ condition: { ready: false, since: "x" } }),
          after: withObserved({ condition: { ready: true, since: "y" } }),
        },
        {
          path: "status/clusters/north.yaml",
          after: withObserved({ condition: { ready: true, since: "y" } }),
        },
        {
          path: "status/clusters/south.yaml",
          before: withObserved({ condition: { ready: false, since: "x" } }),
          after: withObserved({ condition: { ready: false, since: "x", lastError: "again" } }),
        },
      ]),
      events: [
        ["clusterNotReady", "west is NotReady: refused"],
        ["clusterReady", "east is Ready"],
      ],
    },
    {
      name: "a prune newly blocked, one still blocked by the same token",
      change: change(`sync: east Healthy${trailers("sync")}`, [
        {
          path: "status/clusters/east.yaml",
          after: withObserved({
            pruneBlocked: { token: "prune-1", objects: 4, reasons: ["would delete 4 of 5"] },
          }),
        },
        {
          path: "status/clusters/west.yaml",
          before: withObserved({ pruneBlocked: { token: "prune-2" } }),
          after: withObserved({ pruneBlocked: { token: "prune-2" }, reachable: true }),
        },
      ]),
      events: [
        [
          "pruneBlocked",
          "prune blocked in east: would delete 4 of 5; allow it with prune-1 in spec.pruning.allowPrune",
        ],
      ],
    },
    {
      name: "a rollout newly halted in one cluster (bucketed and unbucketed app files)",
      change: change(`sync: east Degraded${trailers("rollout")}`, [
        {
          path: "status/apps/3f/web.yaml",
          before: withObserved({
            east: { health: "Progressing", rollout: "waiting for east to be Healthy" },
          }),
          after: withObserved({
            east: { health: "Degraded", rollout: "rollout halted: east did not become Healthy in time" },
            west: { health: "Healthy" },
          }),
        },
        {
          path: "status/apps/api.yaml",
          before: withObserved({ east: { rollout: "rollout halted: east did not become Healthy in time" } }),
          after: withObserved({ east: { rollout: "rollout halted: east did not become Healthy in time" } }),
        },
      ]),
      events: [["rolloutHalted", "web in east: rollout halted: east did not become Healthy in time"]],
    },
    {
      name: "migration batches reaching Failed and Succeeded",
      change: change(`sync: east Healthy; migration: legacy${trailers("migration")}`, [
        {
          path: "status/migrations/legacy.yaml",
          before: migration([
            { name: "canary", state: "Observing" },
            { name: "rest", state: "Syncing" },
            { name: "done", state: "Succeeded" },
          ]),
          after: migration([
            { name: "canary", state: "Succeeded" },
            { name: "rest", state: "Failed", reason: "web Degraded in east" },
            { name: "done", state: "Succeeded" },
          ]),
        },
      ]),
      events: [
        ["migrationBatchSucceeded", "migration legacy, batch canary: Succeeded"],
        ["migrationBatchFailed", "migration legacy, batch rest: Failed (web Degraded in east)"],
      ],
    },
    {
      name: "a hosted control plane's credential newly issued that expires within two weeks, one not",
      change: change(`sync: host Healthy${trailers("sync")}`, [
        {
          path: "status/clusters/host.yaml",
          before: credentials({ "cp/admin": ADMIN }),
          after: credentials({
            "cp/admin": ADMIN,
            "cp/serving": { fingerprint: "bb", notAfter: "2026-12-10T00:00:00Z" },
            "cp/client": { fingerprint: "cc", notAfter: "2027-12-10T00:00:00Z" },
          }),
        },
      ]),
      events: [["certificateExpiring", "tenant: cp/serving (hosted on host) expires 2026-12-10T00:00:00Z"]],
    },
    {
      name: "a member's own credential found expiring, then the same one again (no second event), then a renewed one not expiring",
      change: change(`sync: east west north${trailers("sync")}`, [
        {
          path: "status/clusters/east.yaml",
          before: withObserved({
            credential: { kind: "token", notAfter: "2026-12-20T00:00:00Z", fingerprint: "e1" },
          }),
          after: withObserved({
            credential: {
              kind: "token",
              notAfter: "2026-12-20T00:00:00Z",
              fingerprint: "e1",
              expiring: true,
            },
          }),
        },
        {
          path: "status/clusters/west.yaml",
          before: withObserved({
            credential: {
              kind: "client-certificate",
              notAfter: "2026-12-09T00:00:00Z",
              fingerprint: "w1",
              expiring: true,
            },
          }),
          after: withObserved({
            credential: {
              kind: "client-certificate",
              notAfter: "2026-12-09T00:00:00Z",
              fingerprint: "w1",
              expiring: true,
            },
            conflicts: 1,
          }),
        },
        {
          path: "status/clusters/north.yaml",
          before: withObserved({
            credential: {
              kind: "token",
              notAfter: "2026-12-09T00:00:00Z",
              fingerprint: "n1",
              expiring: true,
            },
          }),
          after: withObserved({
            credential: { kind: "token", notAfter: "2027-03-09T00:00:00Z", fingerprint: "n2" },
          }),
        },
      ]),
      events: [
        [
          "certificateExpiring",
          "east: gitfleet's token expires 2026-12-20T00:00:00Z; renew it (gitfleet join east)",
        ],
      ],
    },
    {
      name: "etcd members raising alarms: one new NOSPACE, one CORRUPT already recorded, one cleared, one name that is not an alarm",
      change: change(`sync: host Healthy${trailers("sync")}`, [
        {
          path: "status/clusters/host.yaml",
          before: etcds({
            "pc-1": { "etcd-0": undefined, "etcd-1": "CORRUPT", "etcd-2": "NOSPACE" },
            "pc-2": { "etcd-0": undefined },
          }),
          after: etcds({
            "pc-1": { "etcd-0": "NOSPACE", "etcd-1": "CORRUPT", "etcd-2": undefined },
            "pc-2": { "etcd-0": "no space; rm -rf /" },
          }),
        },
      ]),
      events: [
        [
          "etcdAlarm",
          "pc-1: etcd gitfleet-cp-pc-1/etcd (hosted on host) member etcd-0 raised NOSPACE: its database reached its quota, and it refuses writes until space is freed (compact, defragment) and the alarm disarmed",
        ],
      ],
    },
    {
      name: "an etcd member's alarm in a host seen for the first time",
      change: change(`sync: host Healthy${trailers("sync")}`, [
        { path: "status/clusters/host.yaml", after: etcds({ "pc-1": { "etcd-2": "CORRUPT" } }) },
      ]),
      events: [
        [
          "etcdAlarm",
          "pc-1: etcd gitfleet-cp-pc-1/etcd (hosted on host) member etcd-2 raised CORRUPT: its data differs from the other members'; replace it (EtcdMemberReplacement) or restore the etcd",
        ],
      ],
    },
    {
      name: "status files that do not read",
      change: change(`sync: east Healthy${trailers("sync")}`, [
        { path: "status/clusters/east.yaml", before: "observed: [", after: "observed:\n  - ]" },
        { path: "status/migrations/x.yaml", after: "batches: 7\n" },
      ]),
      events: [],
    },
  ])("reads $name", ({ change: input, events }) => {
    const found = fleetEvents(input);
    expect(found.map((e) => [e.type, e.summary])).toEqual(events);
    for (const event of found) {
      expect(event).toMatchObject({ statusCommit: COMMIT, sourceCommit: SOURCE, time: TIME });
      expect(event.id.startsWith(`${COMMIT}/${event.type}`)).toBe(true);
    }
    // The same commit gives the same events with the same ids: redelivery keys are stable.
    expect(fleetEvents(input)).toEqual(found);
    expect(new Set(found.map((e) => e.id)).size).toBe(found.length);
  });
});
