import { describe, expect, it } from "vitest";
import type { JsonMap } from "../../src/apimachinery/json.js";
import { takeOverPatch } from "../../src/kube/take-over.js";

// After adoption gitfleet alone owns what people set by hand; controllers and other appliers keep theirs.

const entry = (manager: string, operation: string, subresource?: string): JsonMap => ({
  manager,
  operation,
  apiVersion: "apps/v1",
  fieldsType: "FieldsV1",
  fieldsV1: { "f:spec": {} },
  ...(subresource ? { subresource } : {}),
});
const live = (...entries: JsonMap[]): JsonMap => ({
  metadata: { name: "checkout", resourceVersion: "42", managedFields: entries },
});

describe("taking over hand-set fields after adoption", () => {
  it.each([
    [
      "kubectl create and kubectl edit go",
      [entry("kubectl-create", "Update"), entry("kubectl-edit", "Update")],
      ["kubectl-create", "kubectl-edit"],
    ],
    ["a controller's status writes stay", [entry("kube-controller-manager", "Update", "status")], []],
    ["an autoscaler's scale writes stay", [entry("hpa", "Update", "scale")], []],
    ["another manager's server-side apply stays", [entry("helm", "Apply")], []],
    ["a script's PUT goes", [entry("node", "Update")], ["node"]],
  ])("%s", (_name, others, removed) => {
    const outcome = takeOverPatch(live(entry("gitfleet", "Apply"), ...others));
    if (removed.length === 0) {
      expect(outcome).toBeUndefined();
      return;
    }
    expect(outcome?.removed).toEqual(removed);
    const metadata = (outcome?.patch.metadata ?? {}) as { managedFields?: { manager: string }[] };
    const kept = metadata.managedFields ?? [];
    expect(kept.map((e) => e.manager)).toEqual(
      ["gitfleet", ...others.map((e) => String(e.manager))].filter((m) => !removed.includes(m)),
    );
    // Conditional on what was read.
    expect(outcome?.patch.metadata).toMatchObject({ resourceVersion: "42" });
  });
});
