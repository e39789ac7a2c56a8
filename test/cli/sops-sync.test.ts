import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { asMap } from "../../src/apimachinery/json.js";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { appStatusPath } from "../../src/status/status-files.js";
import { BASE_SPEC, fleetFiles } from "../helpers/fleet-spec.js";
import { branchFiles, commitTree, createRepo, gitIn, tempDir } from "../helpers/git-repo.js";
import { writeKubeconfig } from "../helpers/member.js";
import { type AgeKey, ageKey, ageKeyFile, sopsEncrypt } from "../helpers/sops.js";

/**
 * `gitfleet reconcile --once` with a Secret the real sops encrypted: applied to the simulated
 * members with its values only when the controller holds a key of its recipients, and its values on
 * no surface gitfleet writes — the status branch's whole history, and everything it prints at debug.
 */
const BIN = fileURLToPath(new URL("../../bin/gitfleet.js", import.meta.url));
const VALUE = "correct-horse-test-only";
const PLAIN = `apiVersion: v1
kind: Secret
metadata:
  name: db
  labels:
    tier: data
stringData:
  password: ${VALUE}
`;

let key: AgeKey;
let encrypted: string;
let dir: string;
let cleanup: () => void;
let members: SimulatedMember[];
let kubeconfig: string;

beforeAll(async () => {
  key = await ageKey();
  encrypted = sopsEncrypt(PLAIN, [key.recipient]);
}, 600_000);
beforeEach(async () => {
  ({ dir, cleanup } = tempDir("gitfleet-cli-sops-"));
  mkdirSync(join(dir, "fleet"));
  members = await Promise.all(BASE_SPEC.clusters.map(({ name }) => startMember({ name })));
  kubeconfig = writeKubeconfig(join(dir, "kubeconfig"), members);
  writeFileSync(join(dir, "keys.txt"), ageKeyFile([key]));
});
afterEach(async () => {
  await Promise.all(members.map((m) => m.close()));
  cleanup();
});

function fleet(secret: string) {
  return new Map([...fleetFiles(BASE_SPEC), ...fileTreeFromText({ "apps/web/secret.yaml": secret })]);
}

function reconcile(...args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      [BIN, "reconcile", "--repo", join(dir, "fleet"), "--once", "--kubeconfig", kubeconfig, ...args],
      { encoding: "utf8", timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}\n${stderr}` }),
    ),
  );
}

// What the status branch says of app web (where a person reads why an object of it failed).
function webStatus(): string {
  return branchFiles(join(dir, "fleet"), "gitfleet/status").get(appStatusPath("web")) ?? "";
}

async function secretIn(cluster: string): Promise<Record<string, unknown> | undefined> {
  const member = members.find((m) => m.name === cluster) as SimulatedMember;
  const response = await fetch(`${member.url}/api/v1/namespaces/default/secrets/db`);
  return response.status === 404
    ? undefined
    : asMap(((await response.json()) as Record<string, unknown>).data);
}

describe("a sops-encrypted Secret through reconcile and sync", () => {
  it("is applied with its values only with a key, and its values reach nothing gitfleet writes or prints", async () => {
    createRepo(join(dir, "fleet"), fleet(encrypted));
    const without = await reconcile("--log-level", "debug");
    expect(without.code).toBe(1);
    expect(without.output).toMatch(/^ {2}east: 7 objects, 6 created, 0 updated, 0 pruned, 1 failed$/m);
    expect(webStatus()).toContain(
      "apps/web/secret.yaml is encrypted with sops and this controller holds no age key (--sops-age-key-file)",
    );
    expect(await secretIn("east")).toBeUndefined();

    const opened = await reconcile("--log-level", "debug", "--sops-age-key-file", join(dir, "keys.txt"));
    expect(opened.code).toBe(0);
    for (const cluster of ["east", "west", "south"])
      expect(await secretIn(cluster)).toEqual({ password: Buffer.from(VALUE).toString("base64") });

    // A changed byte outside the values breaks the MAC: reported, and the member keeps what it had.
    commitTree(join(dir, "fleet"), fleet(encrypted.replace("tier: data", "tier: cache")), "relabel");
    const tampered = await reconcile("--log-level", "debug", "--sops-age-key-file", join(dir, "keys.txt"));
    expect(tampered.code).toBe(1);
    expect(webStatus()).toContain(
      "apps/web/secret.yaml cannot be decrypted: its MAC does not match its values: the file was changed after sops encrypted it",
    );
    expect(await secretIn("east")).toEqual({ password: Buffer.from(VALUE).toString("base64") });

    const history = gitIn(join(dir, "fleet"), "log", "-p", "--all");
    for (const surface of [history, without.output, opened.output, tampered.output]) {
      expect(surface).not.toContain(VALUE);
      expect(surface).not.toContain(Buffer.from(VALUE).toString("base64"));
    }
    expect(gitIn(join(dir, "fleet"), "log", "--format=%s", "gitfleet/status")).toMatch(/sync: /);
  });

  it("refuses an age key file that holds anything but identities, naming the line, before it reconciles", async () => {
    createRepo(join(dir, "fleet"), fleet(encrypted));
    writeFileSync(join(dir, "bad.txt"), `# keys\n${key.recipient}\n`);
    const result = await reconcile("--sops-age-key-file", join(dir, "bad.txt"));
    expect(result.code).toBe(64);
    expect(result.output).toContain(
      `--sops-age-key-file ${join(dir, "bad.txt")}: line 2 is not an age identity (AGE-SECRET-KEY-1…)`,
    );
    expect(result.output).not.toContain(key.recipient);
  });
});
