import { execFileSync } from "node:child_process";
import { chmodSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ReconcilerOptions } from "../../src/controller/reconciler.js";
import { commitSigner } from "../../src/git/commit-signer.js";
import type { SshAccess } from "../../src/git/ssh-transport.js";
import { startMember } from "../../src/sim/member-server.js";
import { gitfleetAsync } from "../helpers/cli.js";
import { BASE_SPEC, type FleetSpec, fleetFiles } from "../helpers/fleet-spec.js";
import { branchFiles, commitTree, gitIn, tempDir } from "../helpers/git-repo.js";
import { spawnRun } from "../helpers/gitfleet-run.js";
import { until, writeKubeconfig } from "../helpers/member.js";
import { expectRaceResolved, remoteFleet, remoteReconciler, webReplicas } from "../helpers/remote-fleet.js";
import { type GitSshServer, startGitSshServer } from "../helpers/sshd.js";
import { sshSigningKey } from "../helpers/sync-fleet.js";

/**
 * The reconcile loop against a remote over SSH: a real sshd on loopback whose deploy key may only run
 * git-shell, a bare repository people push to with the git CLI, gitfleet fetching and pushing over
 * SSH with the key and a known_hosts file.
 */
let root: string;
let cleanup: () => void;
let server: GitSshServer;
let access: SshAccess;
let fleet: ReturnType<typeof remoteFleet>;
const bare = () => fleet.bare;
const push = (spec: FleetSpec, message: string) => fleet.push(spec, message);

beforeEach(async () => {
  ({ dir: root, cleanup } = tempDir("gitfleet-ssh-"));
  fleet = remoteFleet(root);
  server = await startGitSshServer(`${root}/sshd`);
  writeFileSync(`${root}/known_hosts`, server.knownHosts);
  // As a Kubernetes Secret mounts it: readable by the group (ssh itself would refuse this file).
  chmodSync(server.clientKeyFile, 0o644);
  access = { keyFile: server.clientKeyFile, knownHostsFile: `${root}/known_hosts` };
});
afterEach(async () => {
  await server.close();
  cleanup();
});

const controller = (name: string, onStage?: ReconcilerOptions["onStage"]) =>
  remoteReconciler(
    name,
    { location: server.urlOf(bare()), cacheDir: `${root}/cache-${name}`, ssh: access },
    onStage ? { onStage } : {},
  );

describe("reconciling a remote over SSH", () => {
  it("fetches and pushes the status branch with a deploy key, then reconciles the next commit", async () => {
    const loop = await controller("a");
    const first = await loop.reconcile();
    expect(first.result).toBe("committed");
    expect(gitIn(bare(), "rev-parse", "gitfleet/status")).toBe(first.statusCommit);
    expect(gitIn(bare(), "fsck", "--strict", "--no-dangling")).toBe("");
    expect(
      branchFiles(bare(), "gitfleet/status").get("rendered/east/shop/apps.Deployment.web.yaml"),
    ).toContain("replicas: 2");
    const source = push(webReplicas(9), "web: 9 replicas");
    expect(await loop.reconcile()).toMatchObject({ result: "committed", sourceCommit: source });
    expect(gitIn(bare(), "log", "-1", "--format=%s", "gitfleet/status")).toMatch(
      /^web: Deployment shop\/web 9 replicas/,
    );
    expect((await loop.reconcile()).result).toBe("up-to-date");
  });

  it("two controllers racing: the push that lost is refused by the lease, and no status is lost", async () => {
    await expectRaceResolved(controller, fleet);
  });

  // Another writer moves the status branch after the lease was checked, before the server's update
  // (a pre-receive hook does it once, outside the push's quarantine): the server answers "failed to
  // update ref". That is a race lost, as a stale lease is: the controller regenerates on the new tip.
  it("a status branch moved between the lease's check and the server's update is a race lost: regenerated on the new tip", async () => {
    const loop = await controller("a");
    expect((await loop.reconcile()).result).toBe("committed");
    const outsideQuarantine =
      "env -u GIT_QUARANTINE_PATH -u GIT_OBJECT_DIRECTORY -u GIT_ALTERNATE_OBJECT_DIRECTORIES";
    writeFileSync(
      `${bare()}/hooks/pre-receive`,
      [
        "#!/bin/sh",
        "while read old new ref; do",
        '  if [ "$ref" = refs/heads/gitfleet/status ] && [ ! -e "$GIT_DIR/raced" ]; then',
        '    touch "$GIT_DIR/raced"',
        `    other=$(${outsideQuarantine} git commit-tree "$old^{tree}" -p "$old" -m "another writer")`,
        `    ${outsideQuarantine} git update-ref refs/heads/gitfleet/status "$other" "$old"`,
        "  fi",
        "done",
        "exit 0",
        "",
      ].join("\n"),
    );
    chmodSync(`${bare()}/hooks/pre-receive`, 0o755);
    const source = push(webReplicas(9), "web: 9 replicas");
    expect(await loop.reconcile()).toMatchObject({ result: "committed", sourceCommit: source, attempts: 2 });
    const history = gitIn(bare(), "log", "--format=%s", "gitfleet/status");
    expect(history.split("\n").slice(0, 2)).toEqual([
      expect.stringMatching(/^web: Deployment shop\/web 9 replicas/),
      "another writer",
    ]);
    expect(branchFiles(bare(), "gitfleet/status").get("status/source.yaml")).toContain(
      `sourceCommit: ${source}`,
    );
  });

  it("a push the server refuses with the branch where it was (a hook) is an error, not a race", async () => {
    writeFileSync(`${bare()}/hooks/pre-receive`, '#!/bin/sh\necho "status branch is frozen" >&2\nexit 1\n');
    chmodSync(`${bare()}/hooks/pre-receive`, 0o755);
    const loop = await controller("a");
    await expect(loop.reconcile()).rejects.toThrow(
      /refused to update refs\/heads\/gitfleet\/status: .*pre-receive hook declined/,
    );
    expect(() => gitIn(bare(), "rev-parse", "--verify", "-q", "gitfleet/status")).toThrow();
  });

  it.each([
    {
      name: "a host key that is not the one known_hosts names",
      prepare: () =>
        writeFileSync(`${root}/known_hosts`, "[127.0.0.1]:1 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA6q\n"),
      error: /Host key verification failed/,
    },
    {
      name: "an empty known_hosts (no host is trusted on first use)",
      prepare: () => writeFileSync(`${root}/known_hosts`, ""),
      error: /Host key verification failed/,
    },
    {
      name: "a deploy key the server does not know",
      prepare: () => {
        rmSync(server.clientKeyFile);
        execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", server.clientKeyFile]);
      },
      error: /Permission denied \(publickey\)/,
    },
    {
      name: "a known_hosts file that is not there",
      prepare: () => rmSync(`${root}/known_hosts`),
      error: /^the known_hosts file \/.*\/known_hosts does not exist$/,
    },
    {
      name: "a key file that holds no key",
      prepare: () => writeFileSync(server.clientKeyFile, "not a key\n"),
      error: /the SSH key file .* holds no private key/,
    },
  ])("refuses $name, writing nothing", async ({ prepare, error }) => {
    prepare();
    const loop = await controller("a");
    await expect(loop.reconcile()).rejects.toThrow(error);
    expect(() => gitIn(bare(), "rev-parse", "--verify", "-q", "gitfleet/status")).toThrow();
  });

  it("the pull-mode agent reads the status branch and pushes its report over SSH", async () => {
    // north is a pull-mode member; the controller signs what the agent will apply.
    const files = new Map(fleetFiles(BASE_SPEC));
    const cluster = new TextDecoder().decode(files.get("clusters/north.yaml"));
    files.set("clusters/north.yaml", new TextEncoder().encode(`${cluster}  connection:\n    mode: pull\n`));
    commitTree(fleet.work, files, "north: pull mode");
    gitIn(fleet.work, "push", "-q", "origin", "main");
    const key = sshSigningKey(root);
    const signer = await remoteReconciler(
      "signer",
      { location: server.urlOf(bare()), cacheDir: `${root}/cache-signer`, ssh: access },
      { sign: commitSigner("ssh", key) },
    );
    expect((await signer.reconcile()).result).toBe("committed");
    writeFileSync(`${root}/allowed_signers`, `controller ${readFileSync(`${key}.pub`, "utf8")}`);
    const north = await startMember({ name: "north" });
    try {
      const result = await gitfleetAsync([
        ...["agent", "--cluster", "north", "--repo", server.urlOf(bare()), "--once", "--log-level", "error"],
        ...["--ssh-key-file", access.keyFile, "--ssh-known-hosts", access.knownHostsFile],
        ...["--kubeconfig", writeKubeconfig(`${root}/kubeconfig`, [north])],
        ...["--trusted-keys", `${root}/allowed_signers`, "--cache-dir", `${root}/cache-agent`],
      ]);
      expect(result.stderr).toBe("");
      expect(result.stdout).toMatch(
        /^north: (\d+) objects, \1 created, 0 updated, 0 pruned; report committed\n$/,
      );
      expect(gitIn(bare(), "log", "-1", "--format=%an", "gitfleet/status-agents/north")).toBe(
        "gitfleet agent",
      );
    } finally {
      await north.close();
    }
  });

  it("gitfleet run takes the remote, the key and known_hosts from its flags", async () => {
    const run = await spawnRun(
      [
        "--repo",
        server.urlOf(bare()),
        "--ssh-key-file",
        access.keyFile,
        "--ssh-known-hosts",
        access.knownHostsFile,
        "--cache-dir",
        `${root}/cache-run`,
        "--no-sync",
        "--listen",
        "127.0.0.1:0",
        "--interval",
        "1h",
      ],
      { GITFLEET_WEBHOOK_SECRET: "webhook-secret-for-tests" },
    );
    try {
      const tip = await until(() => {
        try {
          return gitIn(bare(), "rev-parse", "--verify", "-q", "gitfleet/status");
        } catch {
          return undefined;
        }
      }, 30_000);
      expect(tip).toMatch(/^[0-9a-f]{40}$/);
      // The deploy key is on no surface: the log, the metrics, the status branch.
      const key = readFileSync(access.keyFile, "utf8");
      const surfaces = [
        JSON.stringify(run.records),
        await (await fetch(`${run.url}/metrics`)).text(),
        gitIn(bare(), "log", "-p", "gitfleet/status"),
      ];
      for (const surface of surfaces) {
        expect(surface).not.toContain("PRIVATE KEY");
        for (const line of key.split("\n").filter((l) => l.length > 40)) expect(surface).not.toContain(line);
      }
    } finally {
      run.child.kill("SIGKILL");
    }
  });
});
