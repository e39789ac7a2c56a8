import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { helm, helmBinary } from "../helpers/helm.js";

/**
 * The agent's chart (charts/gitfleet-agent) as helm lints and renders it: the flags the agent gets
 * from each value, its RBAC, what it refuses. The second tier applies its manifests to a real API
 * server (test/e2e/replicas.e2e.ts).
 */
const root = fileURLToPath(new URL("../..", import.meta.url));
const CHART = join(root, "charts/gitfleet-agent");
const REQUIRED = ["cluster=idc-west-1", "repo.url=https://git.example.com/platform/fleet.git"];
let binary: string;
let home: string;

beforeAll(() => {
  binary = helmBinary();
  home = mkdtempSync(join(tmpdir(), "gitfleet-agent-chart-"));
}, 20 * 60_000);
afterAll(() => rmSync(home, { recursive: true, force: true }));

type Doc = { kind: string; metadata: { name: string; namespace?: string } } & Record<string, unknown>;

async function render(...sets: string[]): Promise<Doc[]> {
  const args = ["template", "agent", CHART, "--namespace", "gitfleet-system"];
  for (const set of sets) args.push("--set", set);
  const text = await helm(binary, home, args);
  return parseAllDocuments(text)
    .map((doc) => doc.toJS() as Doc | null)
    .filter((doc): doc is Doc => doc !== null);
}

interface Pod {
  containers: { args: string[]; securityContext: Record<string, unknown> }[];
  volumes: { name: string; secret?: { secretName: string; defaultMode: number } }[];
  automountServiceAccountToken: boolean;
}
const pod = (docs: Doc[]) =>
  (docs.find((d) => d.kind === "Deployment") as unknown as { spec: { template: { spec: Pod } } }).spec
    .template.spec;
const args = (docs: Doc[]) => pod(docs).containers[0]?.args ?? [];

describe("the gitfleet-agent chart", () => {
  it("passes helm lint", async () => {
    const out = await helm(binary, home, [
      "lint",
      CHART,
      "--strict",
      ...REQUIRED.flatMap((s) => ["--set", s]),
    ]);
    expect(out).toContain("0 chart(s) failed");
  });

  it("runs one agent for the cluster, trusting only the Secret's keys, with a token file to push its branch", async () => {
    const docs = await render(...REQUIRED);
    expect(docs.map((d) => `${d.kind} ${d.metadata.name}`)).toEqual([
      "ServiceAccount agent-gitfleet-agent",
      "ClusterRole agent-gitfleet-agent",
      "ClusterRoleBinding agent-gitfleet-agent",
      "Role agent-gitfleet-agent",
      "RoleBinding agent-gitfleet-agent",
      "Deployment agent-gitfleet-agent",
    ]);
    expect(args(docs)).toEqual([
      "agent",
      "--cluster=idc-west-1",
      "--repo=https://git.example.com/platform/fleet.git",
      "--branch=main",
      "--interval=30s",
      "--trusted-keys=/etc/gitfleet/agent/trusted-keys",
      "--trusted-keys-format=ssh",
      "--cache-dir=/var/cache/gitfleet",
      "--log-level=info",
      "--token-file=/etc/gitfleet/agent/git-token",
    ]);
    const spec = pod(docs);
    expect(spec.automountServiceAccountToken).toBe(true);
    expect(spec.volumes.find((v) => v.name === "credentials")?.secret).toEqual({
      secretName: "gitfleet-agent-credentials",
      defaultMode: 0o440,
    });
    expect(spec.containers[0]?.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
    });
    // Its inventory and report live in gitfleet-system, whatever the release's namespace.
    expect(docs.find((d) => d.kind === "Role")?.metadata.namespace).toBe("gitfleet-system");
  });

  it.each([
    [
      ["repo.push=false", "credentials.gitAuth=none"],
      ["--no-push"],
      ["--token-file=/etc/gitfleet/agent/git-token"],
    ],
    [
      ["credentials.gitAuth=ssh"],
      ["--ssh-key-file=/etc/gitfleet/agent/ssh-key", "--ssh-known-hosts=/etc/gitfleet/agent/known_hosts"],
      ["--token-file=/etc/gitfleet/agent/git-token"],
    ],
    [["sops.enabled=true"], ["--sops-age-key-file=/etc/gitfleet/agent/age-key"], []],
    [
      ["repo.statusBranch=fleet/status", "credentials.trustedKeysFormat=openpgp"],
      ["--status-branch=fleet/status", "--trusted-keys-format=openpgp"],
      [],
    ],
  ])("with %j passes %j and not %j", async (sets, present, absent) => {
    const given = args(await render(...REQUIRED, ...sets));
    for (const arg of present) expect(given).toContain(arg);
    for (const arg of absent) expect(given).not.toContain(arg);
  });

  it("writes every kind by default, and only the given rules when narrowed", async () => {
    const role = (docs: Doc[]) => docs.find((d) => d.kind === "ClusterRole")?.rules;
    expect(role(await render(...REQUIRED))).toEqual([
      { apiGroups: ["*"], resources: ["*"], verbs: ["*"] },
      { nonResourceURLs: ["*"], verbs: ["get"] },
    ]);
    expect(
      role(
        await render(
          ...REQUIRED,
          "rbac.rules[0].apiGroups[0]=apps",
          "rbac.rules[0].resources[0]=deployments",
          "rbac.rules[0].verbs[0]=patch",
        ),
      ),
    ).toEqual([{ apiGroups: ["apps"], resources: ["deployments"], verbs: ["patch"] }]);
    expect((await render(...REQUIRED, "rbac.create=false")).map((d) => d.kind)).toEqual([
      "ServiceAccount",
      "Deployment",
    ]);
  });

  it.each([
    [["repo.url=https://git.example.com/f.git"], "cluster is required"],
    [["cluster=west"], "repo.url is required"],
    [[...REQUIRED, "credentials.gitAuth=none"], "credentials.gitAuth none cannot push"],
    [[...REQUIRED, "credentials.gitAuth=env"], "at '/credentials/gitAuth': value must be one of"],
    [[...REQUIRED, "repo.pushh=false"], "additional properties 'pushh' not allowed"],
    [[...REQUIRED, "repo.push=yes"], "at '/repo/push': got string, want boolean"],
  ])("refuses %j: %s", async (sets, message) => {
    await expect(render(...sets)).rejects.toThrow(message);
  });
});
