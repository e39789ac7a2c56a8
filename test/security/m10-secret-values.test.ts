import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadFleet } from "../../src/load/load-fleet.js";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import { formatProblem } from "../../src/model/problem.js";
import { renderFleet } from "../../src/render/render-fleet.js";
import { gitfleetCli } from "../helpers/cli.js";
import { branchFiles, createRepo, tempDir } from "../helpers/git-repo.js";
import { MINIMAL_FLEET, minimalFleetWith } from "../helpers/minimal-fleet.js";

/**
 * M10 (security audit): Secret values reached the rendered tree — and the status branch, plans and
 * the API — when wrapped in `kind: List` or kept in kubectl's last-applied annotation, and the value
 * digest was a plain sha256 anyone could check a guess against. Lists are now expanded as kubectl
 * expands them, the annotation is dropped, and the digest is an HMAC with the operator's key.
 */

const VALUE = "hunter2-SUPERSECRET";
const B64 = Buffer.from(VALUE).toString("base64");
const LIST = `apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: Secret
    metadata:
      name: arena-secrets
    stringData:
      password: ${VALUE}
  - apiVersion: v1
    kind: ConfigMap
    metadata:
      name: arena-config
    data:
      mode: ranked
`;
const LAST_APPLIED = `apiVersion: v1
kind: Secret
metadata:
  name: arena-rcon
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: |
      {"apiVersion":"v1","data":{"rcon":"${B64}"},"kind":"Secret","metadata":{"name":"arena-rcon"}}
data:
  rcon: ${B64}
`;
const KEY = new TextEncoder().encode("a-test-key-of-32-bytes-not-real!");

function rendered(files: Record<string, string>, key: Uint8Array<ArrayBufferLike> = KEY) {
  const result = loadFleet(minimalFleetWith(files));
  if (!result.model) throw new Error(result.problems.map(formatProblem).join("\n"));
  return renderFleet(result.model, { secretDigestKey: key });
}

describe("M10: Secret values never reach the rendered tree", () => {
  it("expands a List: its Secret is redacted, its ConfigMap rendered, each in its own file", () => {
    const render = rendered({ "apps/web/list.yaml": LIST });
    const texts = render.objects.map((o) => o.text).join("\n");
    expect(texts).not.toContain(VALUE);
    expect(texts).not.toContain(B64);
    const paths = render.objects.map((o) => o.path).filter((p) => p.includes("arena"));
    expect(paths).toEqual([
      "rendered/east/shop/core.ConfigMap.arena-config.yaml",
      "rendered/east/shop/core.Secret.arena-secrets.yaml",
      "rendered/west/shop/core.ConfigMap.arena-config.yaml",
      "rendered/west/shop/core.Secret.arena-secrets.yaml",
    ]);
    expect(render.objects.find((o) => o.path.endsWith("core.Secret.arena-secrets.yaml"))?.text).toMatch(
      /gitfleet\.io\/secret-digest: "?hmac-sha256:[0-9a-f]{64}/,
    );
  });

  it.each([["SecretList"], ["ConfigMapList"]])("expands a %s the same way", (kind) => {
    const render = rendered({ "apps/web/list.yaml": LIST.replace("kind: List", `kind: ${kind}`) });
    expect(render.objects.map((o) => o.text).join("\n")).not.toContain(VALUE);
    expect(render.objects.some((o) => o.path.includes("List"))).toBe(false);
  });

  it("validates the objects inside a List, pointing into items", () => {
    const result = loadFleet(
      minimalFleetWith({ "apps/web/list.yaml": LIST.replace("name: arena-config", "name: Arena_Config") }),
    );
    expect(result.problems.filter((p) => p.severity === "error").map(formatProblem)).toEqual([
      "apps/web/list.yaml:13:13: error: /items/1/metadata/name: \"Arena_Config\" must consist of lowercase letters, digits, '-' and '.', and start and end with a letter or digit [INVALID_NAME]",
    ]);
  });

  it("drops kubectl's last-applied annotation from a Secret", () => {
    const text = rendered({ "apps/web/rcon.yaml": LAST_APPLIED }).objects.find((o) =>
      o.path.endsWith("core.Secret.arena-rcon.yaml"),
    )?.text;
    expect(text).toBeDefined();
    expect(text).not.toContain(B64);
    expect(text).not.toContain("last-applied-configuration");
  });

  it("keys the digest: not the audit's plain sha256, different under another key, stable under one", () => {
    const digest = (key: Uint8Array<ArrayBufferLike>) =>
      /secret-digest: "?([^"\n]+)/.exec(
        rendered({ "apps/web/list.yaml": LIST }, key).objects.find((o) =>
          o.path.endsWith("east/shop/core.Secret.arena-secrets.yaml"),
        )?.text ?? "",
      )?.[1];
    const plain = `sha256:${createHash("sha256")
      .update(JSON.stringify([["stringData.password", VALUE]]))
      .digest("hex")}`;
    const first = digest(KEY);
    expect(first).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(first).not.toContain(plain.slice(7));
    expect(digest(KEY)).toBe(first);
    expect(digest(new TextEncoder().encode("another-key-of-32-bytes-not-real"))).not.toBe(first);
  });
});

describe("M10: through reconcile, the status branch holds no value", () => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => {
    ({ dir, cleanup } = tempDir("gitfleet-m10-"));
  });
  afterEach(() => cleanup());

  it("no file of the status branch contains the value or its base64", () => {
    const repo = join(dir, "repo");
    mkdirSync(repo);
    createRepo(
      repo,
      fileTreeFromText({ ...MINIMAL_FLEET, "apps/web/list.yaml": LIST, "apps/web/rcon.yaml": LAST_APPLIED }),
    );
    const result = gitfleetCli(["reconcile", "--repo", repo, "--once", "--no-sync", "--log-level", "error"], {
      env: { GITFLEET_SECRET_DIGEST_KEY: "a-test-key-of-32-bytes-not-real!" },
    });
    expect(result.stdout).toContain("committed (valid");
    const files = branchFiles(repo, "gitfleet/status");
    expect(files.size).toBeGreaterThan(5);
    for (const [path, text] of files) {
      expect(text, path).not.toContain(VALUE);
      expect(text, path).not.toContain(B64);
    }
  });
});
