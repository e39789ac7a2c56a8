import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EXAMPLE_REPO_DIR } from "../helpers/example-repo.js";
import { tempDir } from "../helpers/git-repo.js";
import { kubectl as kubectlWith } from "../helpers/member.js";

/** `gitfleet simulate` as a process, used through the kubeconfig it writes. */
const BIN = fileURLToPath(new URL("../../bin/gitfleet.js", import.meta.url));
let dir: string;
let cleanup: () => void;
let child: ChildProcess | undefined;
beforeEach(() => ({ dir, cleanup } = tempDir("gitfleet-simulate-")));
afterEach(() => {
  child?.kill("SIGKILL");
  cleanup();
});

const kubectl = (...args: string[]) => kubectlWith(`${dir}/kubeconfig`, ...args);

describe("gitfleet simulate", () => {
  it("starts a member per chosen cluster with a context named after it, until SIGTERM", async () => {
    child = spawn(
      process.execPath,
      [
        BIN,
        "simulate",
        "--from-repo",
        EXAMPLE_REPO_DIR,
        "--cluster",
        "aws-use1",
        "--cluster",
        "gcp-euw1",
        "--kubeconfig-out",
        `${dir}/kubeconfig`,
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let printed = "";
    await new Promise<void>((resolve, reject) => {
      child?.on("exit", (code) => reject(new Error(`simulate exited with ${code}`)));
      child?.stdout?.on("data", (chunk: Buffer) => {
        printed += chunk.toString();
        if (printed.includes("kubeconfig:")) resolve();
      });
    });
    expect(printed).toMatch(
      /^aws-use1\s+http:\/\/127\.0\.0\.1:\d+\ngcp-euw1\s+http:\/\/127\.0\.0\.1:\d+\nkubeconfig: /,
    );
    expect(readFileSync(`${dir}/kubeconfig`, "utf8")).toContain("name: gcp-euw1");
    expect(await kubectl("--context", "gcp-euw1", "get", "ns", "-o", "name")).toMatchObject({
      code: 0,
      stdout: "namespace/default\nnamespace/kube-system\n",
    });
    // The two members are separate clusters.
    writeNamespace(`${dir}/ns.yaml`);
    expect((await kubectl("--context", "aws-use1", "create", "-f", `${dir}/ns.yaml`)).code).toBe(0);
    expect((await kubectl("--context", "gcp-euw1", "get", "ns", "shop")).code).toBe(1);
    const exit = new Promise((resolve) => child?.on("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    expect(await exit).toBe(0);
  });

  it("refuses a cluster the fleet repo does not define", () => {
    const result = spawnSync(
      process.execPath,
      [
        BIN,
        "simulate",
        "--from-repo",
        EXAMPLE_REPO_DIR,
        "--cluster",
        "mars-1",
        "--kubeconfig-out",
        `${dir}/kubeconfig`,
      ],
      { encoding: "utf8" },
    );
    expect(result.status).toBe(64);
    expect(result.stderr).toMatch(/unknown cluster mars-1: .* defines aws-use1, /);
  });
});

function writeNamespace(path: string): void {
  writeFileSync(path, "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n");
}
