import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HOSTED_EXAMPLE_DIR } from "../helpers/hosted-example.js";

/**
 * `gitfleet plan` of changes to hosted control planes between two commits of a real Git repository
 * (the documented hosted-clusters example): which images and flags change on each host and which API
 * servers restart, byte for byte with reviewed golden files.
 */
const root = fileURLToPath(new URL("../..", import.meta.url));
let repo: string;

function git(...args: string[]): void {
  execFileSync("git", ["-c", "user.name=Plan Test", "-c", "user.email=plan@example.com", ...args], {
    cwd: repo,
    stdio: "ignore",
  });
}

function edit(path: string, from: string, to: string): void {
  const file = join(repo, path);
  const text = readFileSync(file, "utf8");
  if (!text.includes(from)) throw new Error(`${path} has no ${from}`);
  writeFileSync(file, text.replace(from, to));
}

function plan(head: string, format = "text") {
  const args = ["plan", "--repo", repo, "--base", "main", "--head", head, "--format", format];
  const result = spawnSync(process.execPath, [join(root, "bin/gitfleet.js"), ...args], { encoding: "utf8" });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const UPGRADE = `apiVersion: gitfleet.io/v1alpha1
kind: ControlPlaneUpgrade
metadata:
  name: cve-2026-1
spec:
  version: v1.34.2
  batches:
    - { name: canary, clusters: [pc-1], approved: true, observe: 10m }
    - { name: rest, clusters: [pc-2] }
`;

const SCENARIOS: Record<string, () => void> = {
  // A reviewed upgrade in batches: at merge only the approved canary's control plane moves.
  "control-plane-upgrade-canary": () => {
    writeFileSync(join(repo, "controlplanes/cve-2026-1.yaml"), UPGRADE);
    git("add", "controlplanes/cve-2026-1.yaml");
  },
  // The fleet-wide CVE upgrade: one line in the class.
  "control-plane-version-bump": () =>
    edit("controlplanes/standard.yaml", "version: v1.34.1", "version: v1.34.2"),
  // One cluster ahead of its class, with a flag changed for every cluster of the class.
  "control-plane-canary-and-flag": () => {
    edit("clusters/pc-2.yaml", "    class: standard\n", "    class: standard\n    version: v1.34.2\n");
    edit("controlplanes/standard.yaml", 'audit-log-maxage: "7"', 'audit-log-maxage: "30"');
  },
};

// Version steps a running control plane cannot take: the plan refuses them where they are written.
const REFUSED: Record<string, { edit: () => void; error: string }> = {
  "apiserver-minor-downgrade": {
    edit: () => edit("controlplanes/standard.yaml", "version: v1.34.1", "version: v1.33.9"),
    error:
      "controlplanes/standard.yaml:7:12: error: /spec/version: pc-1: kube-apiserver v1.34.1 → v1.33.9 is a minor downgrade, which Kubernetes does not support; restore from an etcd snapshot instead [INVALID_FIELD_COMBINATION]",
  },
  "apiserver-minor-skipped": {
    edit: () =>
      edit("clusters/pc-2.yaml", "    class: standard\n", "    class: standard\n    version: v1.36.0\n"),
    error:
      "clusters/pc-2.yaml:14:14: error: /spec/controlPlane/version: pc-2: kube-apiserver v1.34.1 → v1.36.0 skips 1 minor; upgrade one minor at a time (v1.34.1 → v1.35.x first) [INVALID_FIELD_COMBINATION]",
  },
  "etcd-minor-downgrade": {
    edit: () => edit("controlplanes/standard.yaml", "version: 3.6.4-0", "version: 3.5.21-0"),
    error:
      "controlplanes/standard.yaml:17:14: error: /spec/etcd/version: pc-1: etcd 3.6.4-0 → 3.5.21-0 is a minor downgrade of an etcd that holds data, which etcd does not support [INVALID_FIELD_COMBINATION]",
  },
};

beforeAll(() => {
  repo = mkdtempSync(join(tmpdir(), "gitfleet-cp-plan-"));
  cpSync(HOSTED_EXAMPLE_DIR, repo, { recursive: true });
  git("init", "-q", "-b", "main");
  git("add", "-A");
  git("commit", "-q", "-m", "hosted clusters");
  const all = {
    ...SCENARIOS,
    ...Object.fromEntries(Object.entries(REFUSED).map(([name, r]) => [name, r.edit])),
  };
  for (const [name, change] of Object.entries(all)) {
    git("checkout", "-q", "-b", name, "main");
    change();
    git("commit", "-q", "-am", name);
  }
  git("checkout", "-q", "main");
});
afterAll(() => rmSync(repo, { recursive: true, force: true }));

describe("gitfleet plan: hosted control planes", () => {
  it.each(Object.keys(SCENARIOS))("%s (golden)", async (name) => {
    const { code, stdout, stderr } = plan(name);
    expect(stderr).toBe("");
    expect(code).toBe(2); // the plan has changes
    await expect(stdout).toMatchFileSnapshot(`../golden/plan/${name}.txt`);
  });

  it("names every API server that restarts and every image that changes", () => {
    const { stdout } = plan("control-plane-version-bump");
    for (const cluster of ["pc-1", "pc-2"]) {
      const section = stdout.slice(stdout.indexOf(`control plane of ${cluster} on meta-1:`));
      expect(section).toMatch(/^ {4}kube-apiserver: API server restarts \(rolling\)$/m);
      for (const component of ["kube-apiserver", "kube-controller-manager", "kube-scheduler"])
        expect(section).toContain(
          `image registry.k8s.io/${component}:v1.34.1 → registry.k8s.io/${component}:v1.34.2`,
        );
    }
    // etcd and the addons do not move with the Kubernetes version.
    expect(stdout).not.toContain("etcd-a:");
    expect(stdout).not.toContain("cluster pc-1:");
  });

  it.each(Object.keys(REFUSED))("refuses %s at the line that asks for it", (name) => {
    const { code, stdout, stderr } = plan(name);
    expect(code).toBe(4); // an invalid head
    expect(`${stdout}${stderr}`).toContain((REFUSED[name] as { error: string }).error);
  });

  it("an upgrade's approved batch moves only its clusters' control planes, and the plan says which batch starts", () => {
    const { stdout } = plan("control-plane-upgrade-canary");
    expect(stdout).toContain(
      "Upgrades (when merged):\n  cve-2026-1/canary: new → Syncing (upgrading to v1.34.2)\n",
    );
    expect(stdout).toContain("cve-2026-1/rest: new → Pending (waits for batch canary)");
    const pc1 = stdout.slice(stdout.indexOf("control plane of pc-1 on meta-1:"));
    expect(pc1).toContain(
      "image registry.k8s.io/kube-apiserver:v1.34.1 → registry.k8s.io/kube-apiserver:v1.34.2",
    );
    expect(stdout).not.toContain("control plane of pc-2 on meta-1:");
  });

  it("shows the control planes in the pull-request comment", () => {
    const { stdout } = plan("control-plane-canary-and-flag", "markdown");
    expect(stdout).toContain("**Control planes**");
    expect(stdout).toContain("flag --audit-log-maxage: 7 → 30");
  });
});
