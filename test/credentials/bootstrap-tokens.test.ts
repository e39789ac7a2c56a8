import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { asMap, type JsonMap } from "../../src/apimachinery/json.js";
import {
  caCertHash,
  clusterInfoKubeconfig,
  generateToken,
  joinCommand,
  kubeletExtraArgs,
  type LiveToken,
  newestToken,
  poolsNeedingTokens,
  readLiveToken,
  tokenSecret,
} from "../../src/credentials/bootstrap-tokens.js";
import { createCertificateAuthority } from "../../src/credentials/x509.js";
import { resolveNodePools } from "../../src/model/controlplane/node-pools.js";

const HOUR = 3_600_000;
const NOW = Date.parse("2026-12-05T12:00:00Z");
const [workers] = resolveNodePools([{ name: "workers", replicas: 3, join: { tokenTTL: "2h" } }], "v1.36.1");
if (!workers) throw new Error("no pool");
const live = (id: string, expires: number | undefined, pool: string | undefined = "workers"): LiveToken => ({
  id,
  pool,
  expires,
});

describe("bootstrap tokens", () => {
  it.each<[string, LiveToken[], boolean]>([
    ["no token yet", [], true],
    ["the newest has more than half its lifetime left", [live("aaaaaa", NOW + HOUR + 1)], false],
    ["the newest has exactly half its lifetime left", [live("aaaaaa", NOW + HOUR)], false],
    ["the newest has just under half left", [live("aaaaaa", NOW + HOUR - 1)], true],
    ["the only token expired", [live("aaaaaa", NOW - 1)], true],
    ["an old token beside a fresh one", [live("aaaaaa", NOW - 1), live("bbbbbb", NOW + 2 * HOUR)], false],
    ["the fresh token is another pool's", [live("bbbbbb", NOW + 2 * HOUR, "gpu")], true],
    ["a token that never expires", [live("aaaaaa", undefined)], false],
  ])("a pool needs a new token when %s: %s", (_name, tokens, needed) => {
    expect(poolsNeedingTokens([workers], tokens, NOW).map((p) => p.name)).toEqual(needed ? ["workers"] : []);
  });

  it("finds the pool's token that expires last and is still valid", () => {
    const tokens = [
      live("aaaaaa", NOW + HOUR),
      live("bbbbbb", NOW + 2 * HOUR),
      live("cccccc", NOW + 3 * HOUR, "gpu"),
    ];
    expect(newestToken(tokens, "workers", NOW)?.id).toBe("bbbbbb");
    expect(newestToken([live("aaaaaa", NOW)], "workers", NOW)).toBeUndefined();
    expect(newestToken([live("aaaaaa", NOW + 1)], "workers", NOW)?.id).toBe("aaaaaa");
  });

  it("makes tokens in kubeadm's format, never the same twice", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const token = generateToken();
      expect(token.id).toMatch(/^[a-z0-9]{6}$/);
      expect(token.secret).toMatch(/^[a-z0-9]{16}$/);
      seen.add(`${token.id}.${token.secret}`);
    }
    expect(seen.size).toBe(200);
  });

  it("writes the Secret the API server authenticates and reads back only its id, pool and expiry", () => {
    const secret = tokenSecret(workers, { id: "abcdef", secret: "0123456789abcdef" }, NOW + 2 * HOUR);
    const data = Object.fromEntries(
      Object.entries(asMap(secret.data)).map(([k, v]) => [k, Buffer.from(String(v), "base64").toString()]),
    );
    expect(secret).toMatchObject({
      type: "bootstrap.kubernetes.io/token",
      metadata: { name: "bootstrap-token-abcdef", namespace: "kube-system" },
    });
    expect(data).toEqual({
      "token-id": "abcdef",
      "token-secret": "0123456789abcdef",
      expiration: "2026-12-05T14:00:00Z",
      "usage-bootstrap-authentication": "true",
      "usage-bootstrap-signing": "true",
      "auth-extra-groups": "system:bootstrappers:gitfleet:workers",
      description: "gitfleet: joins nodes to pool workers",
    });
    expect(readLiveToken(secret)).toEqual({ id: "abcdef", pool: "workers", expires: NOW + 2 * HOUR });
  });

  it.each<[string, (secret: JsonMap) => JsonMap]>([
    ["another type of Secret", (s) => ({ ...s, type: "Opaque" })],
    ["an id that is not six characters of [a-z0-9]", (s) => withData(s, "token-id", "ABCDEF")],
    ["an id of seven characters", (s) => withData(s, "token-id", "abcdefg")],
    ["an oversized value", (s) => withData(s, "token-id", "a".repeat(300))],
  ])("does not read %s as a token", (_name, change) => {
    const secret = tokenSecret(workers, { id: "abcdef", secret: "0123456789abcdef" }, NOW);
    expect(readLiveToken(change(secret))).toBeUndefined();
  });

  it("reads any id kubeadm could have made", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z0-9]{6}$/), (id) => {
        expect(readLiveToken(tokenSecret(workers, { id, secret: "0123456789abcdef" }, NOW))?.id).toBe(id);
      }),
    );
  });

  it("pins the CA as kubeadm does: sha256 of its SubjectPublicKeyInfo, as openssl computes it", async () => {
    const ca = await createCertificateAuthority(
      { commonName: "pc-1-ca", usage: "ca", validityMs: HOUR },
      NOW,
    );
    const publicKey = execFileSync("openssl", ["x509", "-pubkey", "-noout"], { input: ca.certificatePem });
    const der = execFileSync("openssl", ["pkey", "-pubin", "-outform", "der"], { input: publicKey });
    expect(caCertHash(ca.certificatePem)).toBe(`sha256:${createHash("sha256").update(der).digest("hex")}`);
  });

  it("prints the join command kubeadm takes, with the endpoint as host:port", () => {
    const token = { id: "abcdef", secret: "0123456789abcdef" };
    expect(joinCommand("https://203.0.113.21:6443", token, "sha256:00")).toBe(
      "kubeadm join 203.0.113.21:6443 --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash sha256:00",
    );
    expect(joinCommand("https://[2001:db8::1]:6443", token, "sha256:00")).toContain(
      "kubeadm join [2001:db8::1]:6443 ",
    );
  });

  it("gives the kubelet flags a machine registers with: the pool's labels, sorted, and its taints", () => {
    const [pool] = resolveNodePools(
      [
        {
          name: "gpu",
          replicas: 1,
          labels: { zeta: "1", alpha: "2" },
          taints: [
            { key: "nvidia.com/gpu", value: "true", effect: "NoSchedule" },
            { key: "spot", effect: "PreferNoSchedule" },
          ],
        },
      ],
      "v1.36.1",
    );
    expect(kubeletExtraArgs(pool as NonNullable<typeof pool>)).toBe(
      "--node-labels=alpha=2,gitfleet.io/node-pool=gpu,zeta=1 --register-with-taints=nvidia.com/gpu=true:NoSchedule,spot:PreferNoSchedule",
    );
    expect(kubeletExtraArgs(workers)).toBe("--node-labels=gitfleet.io/node-pool=workers");
  });

  it("writes a cluster-info kubeconfig with the endpoint and the CA and no user", () => {
    const config = JSON.parse(clusterInfoKubeconfig("https://10.0.0.1:6443", "PEM\n"));
    expect(config.clusters).toEqual([
      { name: "", cluster: { server: "https://10.0.0.1:6443", "certificate-authority-data": "UEVNCg==" } },
    ]);
    expect(config.users).toEqual([]);
  });
});

function withData(secret: JsonMap, key: string, value: string): JsonMap {
  return { ...secret, data: { ...asMap(secret.data), [key]: Buffer.from(value).toString("base64") } };
}
