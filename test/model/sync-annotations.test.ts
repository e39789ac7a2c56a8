import { describe, expect, it } from "vitest";
import {
  explainSyncAnnotations,
  notDivided,
  type SyncRole,
  syncRoleOf,
} from "../../src/model/sync-annotations.js";

describe("sync annotations", () => {
  const cases: [string, Record<string, string> | undefined, SyncRole][] = [
    ["none", undefined, { kind: "object", wave: 0 }],
    ["gitfleet's wave", { "gitfleet.io/sync-wave": "2" }, { kind: "object", wave: 2 }],
    ["Argo CD's wave, negative", { "argocd.argoproj.io/sync-wave": "-1" }, { kind: "object", wave: -1 }],
    [
      "gitfleet's wave wins over Argo CD's",
      { "gitfleet.io/sync-wave": "3", "argocd.argoproj.io/sync-wave": "-5" },
      { kind: "object", wave: 3 },
    ],
    [
      "a wave that is no number counts as 0",
      { "argocd.argoproj.io/sync-wave": "soon" },
      { kind: "object", wave: 0 },
    ],
    [
      "an Argo CD PreSync hook: BeforeHookCreation by default",
      { "argocd.argoproj.io/hook": "PreSync" },
      { kind: "hook", wave: 0, hook: { phases: ["PreSync"], deletePolicies: ["BeforeHookCreation"] } },
    ],
    [
      "a hook in two phases with two delete policies, in a wave",
      {
        "gitfleet.io/hook": "PostSync, PreSync",
        "gitfleet.io/hook-delete-policy": "HookFailed,HookSucceeded",
        "gitfleet.io/sync-wave": "5",
      },
      {
        kind: "hook",
        wave: 5,
        hook: { phases: ["PreSync", "PostSync"], deletePolicies: ["HookSucceeded", "HookFailed"] },
      },
    ],
    ["Skip: not applied", { "argocd.argoproj.io/hook": "Skip" }, { kind: "skip" }],
    [
      "gitfleet's hook wins over Argo CD's",
      { "gitfleet.io/hook": "PostSync", "argocd.argoproj.io/hook": "PreSync" },
      { kind: "hook", wave: 0, hook: { phases: ["PostSync"], deletePolicies: ["BeforeHookCreation"] } },
    ],
    [
      "a Helm install hook with a weight and a delete policy",
      {
        "helm.sh/hook": "pre-install,pre-upgrade",
        "helm.sh/hook-weight": "-2",
        "helm.sh/hook-delete-policy": "hook-succeeded",
      },
      { kind: "hook", wave: -2, hook: { phases: ["PreSync"], deletePolicies: ["HookSucceeded"] } },
    ],
    [
      "a Helm post-upgrade hook",
      { "helm.sh/hook": "post-upgrade" },
      { kind: "hook", wave: 0, hook: { phases: ["PostSync"], deletePolicies: ["BeforeHookCreation"] } },
    ],
    ["a Helm test hook is not run", { "helm.sh/hook": "test" }, { kind: "skip" }],
    [
      "Argo CD's hook wins over Helm's, as in Argo CD",
      { "argocd.argoproj.io/hook": "Sync", "helm.sh/hook": "pre-install" },
      { kind: "hook", wave: 0, hook: { phases: ["Sync"], deletePolicies: ["BeforeHookCreation"] } },
    ],
  ];
  it.each(cases)("%s", (_name, annotations, role) => {
    expect(syncRoleOf(annotations)).toEqual(role);
  });

  it("runs hooks and Duplicated workloads once per cluster", () => {
    expect(notDivided({ "gitfleet.io/hook": "PreSync" })).toBe(true);
    expect(notDivided({ "gitfleet.io/replica-scheduling": "Duplicated" })).toBe(true);
    expect(notDivided({ "gitfleet.io/sync-wave": "1" })).toBe(false);
    expect(notDivided(undefined)).toBe(false);
  });

  it("explains what it cannot read, by annotation", () => {
    expect(
      explainSyncAnnotations({
        "gitfleet.io/sync-wave": "1.5",
        "argocd.argoproj.io/hook": "PreDelete",
        "argocd.argoproj.io/hook-delete-policy": "Always",
        "gitfleet.io/replica-scheduling": "Divided",
      }).map((p) => p.key),
    ).toEqual([
      "gitfleet.io/sync-wave",
      "argocd.argoproj.io/hook",
      "argocd.argoproj.io/hook-delete-policy",
      "gitfleet.io/replica-scheduling",
    ]);
    expect(
      explainSyncAnnotations({ "argocd.argoproj.io/sync-wave": " -3 ", "gitfleet.io/hook": "Skip" }),
    ).toEqual([]);
  });
});
