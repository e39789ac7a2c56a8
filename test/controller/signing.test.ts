import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BASE_SPEC, fleetFiles } from "../helpers/fleet-spec.js";
import { commitTree, createRepo, gitIn, tempDir } from "../helpers/git-repo.js";

/** Signed status commits, verified by `git verify-commit` with an allowed-signers file. */
const BIN = fileURLToPath(new URL("../../bin/gitfleet.js", import.meta.url));
let dir: string;
let cleanup: () => void;
beforeEach(() => ({ dir, cleanup } = tempDir("gitfleet-sign-")));
afterEach(() => cleanup());

function reconcile(...flags: string[]) {
  return spawnSync(
    process.execPath,
    [BIN, "reconcile", "--repo", `${dir}/fleet`, "--once", "--no-sync", "--log-level", "error", ...flags],
    {
      encoding: "utf8",
    },
  );
}

describe("signed status commits", () => {
  it("signs with an SSH key so that git verifies every status commit", () => {
    mkdirSync(`${dir}/fleet`);
    createRepo(`${dir}/fleet`, fleetFiles(BASE_SPEC));
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "gitfleet-test", "-f", `${dir}/key`]);
    const publicKey = readFileSync(`${dir}/key.pub`, "utf8").trim();
    writeFileSync(`${dir}/allowed_signers`, `gitfleet@example.com ${publicKey}\n`);
    const author = ["--author", "gitfleet <gitfleet@example.com>", "--signing-key", `${dir}/key`];
    expect(reconcile(...author)).toMatchObject({ status: 0, stderr: "" });
    commitTree(
      `${dir}/fleet`,
      fleetFiles({
        ...BASE_SPEC,
        apps: BASE_SPEC.apps.map((a) => (a.name === "web" ? { ...a, replicas: 8 } : a)),
      }),
      "web: 8",
    );
    expect(reconcile(...author)).toMatchObject({ status: 0, stderr: "" });
    for (const commit of ["gitfleet/status", "gitfleet/status~1"]) {
      const verified = spawnSync(
        "git",
        ["-c", `gpg.ssh.allowedSignersFile=${dir}/allowed_signers`, "verify-commit", commit],
        {
          cwd: `${dir}/fleet`,
          encoding: "utf8",
        },
      );
      expect(verified.status).toBe(0);
      expect(verified.stderr).toContain('Good "git" signature for gitfleet@example.com with ED25519 key');
    }
    // The signature covers the commit: the status branch's content is what git reads.
    expect(gitIn(`${dir}/fleet`, "fsck", "--strict", "--no-dangling")).toBe("");
  });

  it("fails the reconcile, writing nothing, when the key cannot sign", () => {
    mkdirSync(`${dir}/fleet`);
    createRepo(`${dir}/fleet`, fleetFiles(BASE_SPEC));
    const result = reconcile("--signing-key", `${dir}/no-such-key`);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/signing a status commit: ssh-keygen exited 255/);
    expect(
      spawnSync("git", ["rev-parse", "--verify", "-q", "gitfleet/status"], { cwd: `${dir}/fleet` }).status,
    ).not.toBe(0);
  });
});
