import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";

const root = fileURLToPath(new URL("../..", import.meta.url));
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function gitfleet(...args: string[]) {
  const result = spawnSync(process.execPath, [join(root, "bin/gitfleet.js"), ...args], {
    cwd: root,
    encoding: "utf8",
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "gitfleet-render-"));
  dirs.push(dir);
  return dir;
}

describe("gitfleet render", () => {
  it("writes the example fleet's tree in the status branch layout", () => {
    const out = tempDir();
    const { code, stdout } = gitfleet("render", "example-repo", "--out", out);
    expect(stdout).toBe(`rendered 220 objects for 7 clusters into ${join(out, "rendered")}\n`);
    expect(code).toBe(0);
    expect(readdirSync(join(out, "rendered")).sort()).toEqual([
      "aws-use1",
      "gcp-euw1",
      "idc-east-1",
      "idc-east-2",
      "idc-west-1",
      "staging-1",
      "test-1",
    ]);
    // web is exported where it runs, imported everywhere, the cordoned idc-east-2 included.
    expect(readdirSync(join(out, "rendered/aws-use1/shop"))).toContain(
      "multicluster.x-k8s.io.ServiceExport.web.yaml",
    );
    expect(readdirSync(join(out, "rendered/idc-east-2/shop"))).toEqual([
      "multicluster.x-k8s.io.ServiceImport.web.yaml",
    ]);
    expect(readdirSync(join(out, "rendered/idc-east-2/kube-system"))).toEqual([
      "core.ConfigMap.gitfleet-clusterset-zone.yaml",
    ]);
    const web = readFileSync(join(out, "rendered/aws-use1/shop/apps.Deployment.web.yaml"), "utf8");
    expect(web).toContain("image: ecr-mirror.us-east-1.example.com/example-shop/web:1.14.2");
    expect(web).toContain("replicas: 3");
  });

  it("renders only the clusters asked for", () => {
    const out = tempDir();
    const { code } = gitfleet("render", "example-repo", "--out", out, "--cluster", "idc-west-1");
    expect(code).toBe(0);
    expect(readdirSync(join(out, "rendered"))).toEqual(["idc-west-1"]);
  });

  it("prints one YAML stream with --out -: the same objects as the files, each after its path", () => {
    const out = tempDir();
    // One digest key for both runs, so that Secrets' digests agree.
    const key = join(out, "digest-key");
    writeFileSync(key, "a-secret-digest-key-for-this-test-only-32+");
    const common = ["example-repo", "--cluster", "aws-use1", "--secret-digest-key-file", key];
    gitfleet("render", ...common, "--out", out);
    const { code, stdout, stderr } = gitfleet("render", ...common, "--out", "-");
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const documents = stdout.split(/^---\n/m).filter((d) => d !== "");
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory() ? files(join(dir, entry.name)) : [join(dir, entry.name)],
      );
    const written = files(join(out, "rendered")).sort();
    expect(documents).toHaveLength(written.length);
    for (const document of documents) {
      const [comment = "", ...text] = document.split("\n");
      const path = comment.replace(/^# /, "");
      expect(readFileSync(join(out, path), "utf8"), path).toBe(text.join("\n"));
    }
    // A YAML reader takes the stream as the documents the files hold.
    const parsed = parseAllDocuments(stdout);
    expect(parsed.flatMap((d) => d.errors)).toEqual([]);
    expect(parsed.map((d) => (d.toJS() as { kind: string }).kind)).toHaveLength(written.length);
  });

  it("writes nothing for an invalid fleet and prints the problems", () => {
    const out = tempDir();
    const { code, stderr } = gitfleet("render", "test/fixtures/broken-fleet", "--out", out);
    expect(stderr).toContain(
      'placements/web.yaml:10:11: error: /spec/replicaScheduling/type: must be one of Duplicated, Divided (got "Divid") [SCHEMA_VIOLATION]',
    );
    expect(code).toBe(1);
    expect(readdirSync(out)).toEqual([]);
  });

  it("renders with the capacity a status checkout recorded: arena divided by what each cluster fits", () => {
    const arena = (out: string, cluster: string) =>
      /replicas: (\d+)/.exec(
        readFileSync(join(out, `rendered/${cluster}/games/apps.kruise.io.CloneSet.arena.yaml`), "utf8"),
      )?.[1];
    const blind = tempDir();
    expect(gitfleet("render", "example-repo", "--out", blind).code).toBe(0);
    expect(["aws-use1", "gcp-euw1", "idc-east-1"].map((c) => arena(blind, c))).toEqual(["8", "8", "8"]);
    // A status checkout whose clusters recorded 4, 8 and 12 free CPUs (arena's pods request 1 each).
    const status = tempDir();
    mkdirSync(join(status, "status/clusters"), { recursive: true });
    for (const [cluster, cpu] of [
      ["aws-use1", 4],
      ["gcp-euw1", 8],
      ["idc-east-1", 12],
    ] as const)
      writeFileSync(
        join(status, `status/clusters/${cluster}.yaml`),
        `cluster: ${cluster}\nobserved:\n  capacity:\n    nodes: 1\n    readyNodes: 1\n    pools:\n      - count: 1\n        allocatable: {cpu: 16, memory: 68719476736, pods: 110}\n        free: {cpu: ${cpu}, memory: 68719476736, pods: 110}\n`,
      );
    const seen = tempDir();
    const { code, stderr } = gitfleet("render", "example-repo", "--out", seen, "--status", status);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(["aws-use1", "gcp-euw1", "idc-east-1"].map((c) => arena(seen, c))).toEqual(["4", "8", "12"]);
  });
});
