import { X509Certificate } from "node:crypto";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { connect, createServer } from "node:tls";
import { describe, expect, it } from "vitest";
import { rolloverDue } from "../../src/credentials/ca-rollover.js";
import {
  type CredentialPlan,
  type ExistingSecrets,
  planCredentials,
  type SecretData,
} from "../../src/credentials/control-plane-pki.js";
import { readGeneratedKubeconfig } from "../../src/credentials/kubeconfig-text.js";
import { splitChain, withChain } from "../../src/credentials/x509.js";
import { resolveControlPlane } from "../../src/model/controlplane/hosted-control-plane.js";
import type { ControlPlaneClass } from "../../src/model/types.js";

// A CA rollover: a new CA signs everything again while the previous one stays trusted and the new
// one is served cross-signed by it. Checked with real TLS handshakes (OpenSSL through node:tls),
// which is what kube-apiserver's clients and the API server itself do with these files.

const DAY = 86_400_000;
const VALIDITY = 100 * DAY;
const RENEW_BEFORE = 10 * DAY;

const CLASS: ControlPlaneClass = {
  apiVersion: "gitfleet.io/v1alpha1",
  kind: "ControlPlaneClass",
  metadata: { name: "standard" },
  spec: {
    version: "v1.34.1",
    etcd: { version: "3.6.4-0" },
    certificates: { validity: "2400h", renewBefore: "240h" },
  },
  origin: { file: "controlplanes/standard.yaml", index: 0 },
};

const plane = (() => {
  const resolved = resolveControlPlane(
    {
      apiVersion: "gitfleet.io/v1alpha1",
      kind: "Cluster",
      metadata: { name: "pc-1" },
      spec: {
        controlPlane: {
          host: "meta-1",
          class: "standard",
          expose: { type: "LoadBalancer", address: "127.0.0.1" },
        },
      },
      origin: { file: "clusters/pc-1.yaml", index: 0 },
    },
    new Map([["standard", CLASS]]),
  );
  if (!resolved) throw new Error("no plane");
  return resolved;
})();

function applied(existing: ExistingSecrets, plan: CredentialPlan): Map<string, SecretData> {
  const next = new Map(existing);
  for (const write of plan.writes) next.set(`${write.namespace}/${write.name}`, write.data);
  return next;
}

const data = (host: ReadonlyMap<string, SecretData>, name: string) =>
  host.get(`gitfleet-cp-pc-1/${name}`) as SecretData;
const caNotAfter = (host: ReadonlyMap<string, SecretData>) =>
  Date.parse(new X509Certificate(data(host, "ca")["tls.crt"] as string).validTo);
// What a rollover of the three CAs writes again: the CAs and everything they sign (not the service-account key).
const ROLLED = [
  "admin-kubeconfig",
  "apiserver-etcd-client",
  "apiserver-serving",
  "ca",
  "controller-manager-kubeconfig",
  "etcd-ca",
  "etcd-serving",
  "front-proxy-ca",
  "front-proxy-client",
  "scheduler-kubeconfig",
];
const pemCount = (text: string | undefined) => (text ?? "").split("-----BEGIN CERTIFICATE-----").length - 1;

/** A kubeconfig's credentials as a TLS client holds them. */
function clientOf(host: ReadonlyMap<string, SecretData>) {
  const kubeconfig = readGeneratedKubeconfig(data(host, "admin-kubeconfig").kubeconfig as string);
  if (!kubeconfig) throw new Error("no admin kubeconfig");
  return { ca: kubeconfig.caPem, cert: kubeconfig.certificatePem, key: kubeconfig.keyPem };
}

/** The API server's files as kube-apiserver serves and checks clients with them. */
function serverOf(host: ReadonlyMap<string, SecretData>) {
  const ca = data(host, "ca");
  const serving = data(host, "apiserver-serving");
  // Before ca.crt existed a CA's Secret held its certificate alone; the trust is then that.
  return {
    ca: ca["ca.crt"] ?? (ca["tls.crt"] as string),
    cert: serving["tls.crt"] as string,
    key: serving["tls.key"] as string,
  };
}

/** A mutual-TLS handshake: whether the client verified the server and the server the client. */
async function handshake(
  server: { ca: string; cert?: string; key?: string },
  client: { ca: string; cert: string; key: string },
): Promise<"ok" | string> {
  const listener = createServer({ ...server, requestCert: true, rejectUnauthorized: true }, (socket) =>
    socket.end("ok"),
  );
  listener.listen(0, "127.0.0.1");
  await once(listener, "listening");
  const { port } = listener.address() as AddressInfo;
  try {
    return await new Promise<string>((resolve) => {
      const socket = connect({ host: "127.0.0.1", port, ...client }, () => {
        socket.once("data", (chunk) => resolve(String(chunk)));
      });
      socket.once("error", (error) => resolve(error.message));
    });
  } finally {
    listener.close();
  }
}

describe("CA rollover", () => {
  it("is due once the CA would no longer outlive a certificate it signs and its renewal window: at, just below and just past", () => {
    const notAfter = Date.parse("2030-01-01T00:00:00Z");
    const due = notAfter - VALIDITY - RENEW_BEFORE;
    expect(rolloverDue(notAfter, due - 1, VALIDITY, RENEW_BEFORE)).toBe(false);
    expect(rolloverDue(notAfter, due, VALIDITY, RENEW_BEFORE)).toBe(true);
    expect(rolloverDue(notAfter, due + 1, VALIDITY, RENEW_BEFORE)).toBe(true);
  });

  it("rolls the CAs over at that point of a plan, not a millisecond before", async () => {
    const start = Date.parse("2026-12-02T08:00:00Z");
    const host = applied(new Map(), await planCredentials(plane, new Map(), start));
    const due = caNotAfter(host) - VALIDITY - RENEW_BEFORE;
    const actionAt = async (at: number) => {
      const plan = await planCredentials(plane, host, at);
      return ["ca", "front-proxy-ca", "etcd-ca"].map((n) => plan.records.find((r) => r.name === n)?.action);
    };
    expect(await actionAt(due - 1)).toEqual(["kept", "kept", "kept"]);
    expect(await actionAt(due)).toEqual(["renewed", "renewed", "renewed"]);
    expect(await actionAt(due + 1)).toEqual(["renewed", "renewed", "renewed"]);
  });

  it("keeps clients on either CA working through the overlap, both ways, and drops the previous CA when it expires", async () => {
    // The CA is made 890 days ago, so it is due now; the leaves are renewed 50 days ago, so the
    // "old" admin kubeconfig is current.
    const now = Date.now();
    let host = applied(new Map(), await planCredentials(plane, new Map(), now - 890 * DAY));
    host = applied(host, await planCredentials(plane, host, now - 50 * DAY));
    const before = new Map(host);
    expect(await handshake(serverOf(before), clientOf(before))).toBe("ok");

    const rolled = await planCredentials(plane, host, now);
    const ca = rolled.records.find((r) => r.name === "ca");
    expect(ca?.action).toBe("renewed");
    expect(ca?.reason).toMatch(/^expires .*, trusted beside its successor until then$/);
    // Everything the cluster CA signs is issued again by the new one.
    expect(
      rolled.records
        .filter((r) => r.action !== "kept")
        .map((r) => r.name)
        .sort(),
    ).toEqual(ROLLED);
    host = applied(host, rolled);
    const after = new Map(host);
    // The trust bundle is the new CA, then the previous one; each leaf is followed by the new CA
    // cross-signed by the previous one.
    expect(pemCount(data(after, "ca")["ca.crt"])).toBe(2);
    expect(data(after, "ca")["ca.crt"]).toBe(
      withChain(data(after, "ca")["tls.crt"] as string, data(before, "ca")["tls.crt"] as string),
    );
    expect(pemCount(data(after, "apiserver-serving")["tls.crt"])).toBe(2);
    expect(data(after, "apiserver-etcd-client")["ca.crt"]).toBe(data(after, "etcd-ca")["ca.crt"]);
    expect(pemCount(data(after, "etcd-ca")["ca.crt"])).toBe(2);
    expect(new X509Certificate(data(after, "ca")["tls.crt"] as string).subject).toMatch(/^CN=pc-1-ca-\d{8}$/);

    // A kubeconfig handed out before (trusting only the previous CA, holding its certificate)
    // against the API server's new files; a new one against an API server still on the old files
    // (the kubelet has not rewritten them yet); and new against new.
    expect(await handshake(serverOf(after), clientOf(before))).toBe("ok");
    expect(await handshake(serverOf(before), clientOf(after))).toBe("ok");
    expect(await handshake(serverOf(after), clientOf(after))).toBe("ok");
    // Without the cross-signed certificate the old client could not verify the new server.
    const bare = serverOf(after);
    const leafOnly = splitChain(bare.cert).first;
    expect(await handshake({ ...bare, cert: leafOnly }, clientOf(before))).not.toBe("ok");

    // Nothing more is written during the overlap, and a plan kept serves until its end.
    const overlapEnd = caNotAfter(before);
    expect((await planCredentials(plane, host, now + DAY)).writes).toEqual([]);
    // The new leaves (100 days) are renewed before the overlap (110 days) ends, still with the chain.
    host = applied(host, await planCredentials(plane, host, overlapEnd - 15 * DAY));
    expect(pemCount(data(host, "apiserver-serving")["tls.crt"])).toBe(2);
    expect((await planCredentials(plane, host, overlapEnd - 1)).writes).toEqual([]);

    // Once the previous CA expires: the trust is the new CA alone, and what carried the chain is issued again without it.
    const ended = await planCredentials(plane, host, overlapEnd);
    const touched = ended.writes.map((w) => w.name).sort();
    expect(touched).toEqual(ROLLED);
    expect(ended.records.find((r) => r.name === "ca")?.action).toBe("kept");
    expect(ended.records.find((r) => r.name === "apiserver-serving")?.reason).toBe(
      "its CA's previous one expired",
    );
    host = applied(host, ended);
    expect(data(host, "ca")["ca.crt"]).toBe(data(host, "ca")["tls.crt"]);
    expect(Object.keys(data(host, "ca")).sort()).toEqual(["ca.crt", "tls.crt", "tls.key"]);
    expect(pemCount(data(host, "apiserver-serving")["tls.crt"])).toBe(1);
    expect((await planCredentials(plane, host, overlapEnd + DAY)).writes).toEqual([]);
  });

  it.each([
    ["a previous CA that does not parse", { "previous.crt": "not a certificate" }],
    ["a cross-signed certificate of another key", "swap"],
    ["a cross-signed certificate alone", "no-previous"],
    ["a previous CA followed by another certificate", "extra"],
  ] as const)("takes %s as no overlap: the Secret is written back as gitfleet writes it", async (_, edit) => {
    const now = Date.now();
    let host = applied(new Map(), await planCredentials(plane, new Map(), now - 890 * DAY));
    host = applied(host, await planCredentials(plane, host, now));
    const ca = data(host, "ca");
    const front = data(host, "front-proxy-ca");
    const edited: Record<string, string> =
      edit === "swap"
        ? { ...ca, "cross.crt": front["cross.crt"] as string }
        : edit === "extra"
          ? { ...ca, "previous.crt": withChain(ca["previous.crt"] as string, front["tls.crt"] as string) }
          : edit === "no-previous"
            ? Object.fromEntries(Object.entries(ca).filter(([k]) => k !== "previous.crt"))
            : { ...ca, ...edit };
    const broken = new Map(host);
    broken.set("gitfleet-cp-pc-1/ca", edited);
    const plan = await planCredentials(plane, broken, now + DAY);
    const written = plan.writes.find((w) => w.name === "ca")?.data;
    expect(written).toEqual({
      "tls.crt": ca["tls.crt"],
      "tls.key": ca["tls.key"],
      "ca.crt": ca["tls.crt"],
    });
    expect(plan.records.find((r) => r.name === "apiserver-serving")?.reason).toBe(
      "its CA's previous one expired",
    );
  });

  it("adds the trust bundle to a CA Secret written before it existed, keeping the CA", async () => {
    const now = Date.now();
    const host = applied(new Map(), await planCredentials(plane, new Map(), now));
    const old = new Map(host);
    const { "ca.crt": _bundle, ...without } = data(host, "ca");
    old.set("gitfleet-cp-pc-1/ca", without);
    const plan = await planCredentials(plane, old, now + DAY);
    expect(plan.records.find((r) => r.name === "ca")?.action).toBe("kept");
    expect(plan.writes.map((w) => w.name)).toEqual(["ca"]);
    expect(plan.writes[0]?.data).toEqual(data(host, "ca"));
  });
});

// A compromised key replaced at once: a new replaceCAs token gives new CAs and a new service-account
// key with no overlap — what the previous CAs signed is trusted no more — and every certificate
// issued again; the same token again changes nothing.
describe("replacing compromised CAs (replaceCAs)", () => {
  // Days before now: the certificates are valid when the handshakes run.
  const T0 = Date.now() - 10 * DAY;
  const withToken = (token: string | undefined, shared = false) => ({
    ...plane,
    certificates: { ...plane.certificates, replaceCAs: token },
    ...(shared ? { etcd: { ...plane.etcd, mode: "Shared" as const } } : {}),
  });
  const written = (plan: CredentialPlan) => plan.writes.map((w) => w.name).sort();

  it("replaces the CAs and the service-account key at once when the token changes, and only then", async () => {
    const first = applied(new Map(), await planCredentials(withToken(undefined), new Map(), T0));
    const oldClient = clientOf(first);
    expect(await handshake(serverOf(first), oldClient)).toBe("ok");
    const plan = await planCredentials(withToken("incident-1"), first, T0 + DAY);
    expect(written(plan)).toEqual([...ROLLED, "service-account"].sort());
    for (const name of ["ca", "front-proxy-ca", "etcd-ca"]) {
      const record = plan.records.find((r) => r.name === name);
      expect(record, name).toMatchObject({
        action: "reissued",
        reason: "replaced at once for replaceCAs incident-1: the previous CA is trusted no more",
      });
    }
    expect(plan.records.find((r) => r.name === "service-account")?.reason).toBe(
      "replaced at once for replaceCAs incident-1: tokens it signed validate no more",
    );
    const replaced = applied(first, plan);
    for (const name of ["ca", "front-proxy-ca", "etcd-ca", "service-account"]) {
      expect(data(replaced, name)["replaced-for"], name).toBe("incident-1");
      // No overlap: neither the previous CA nor a cross-signed certificate is kept or trusted.
      expect(data(replaced, name)).not.toHaveProperty("previous.crt");
    }
    expect(data(replaced, "service-account")["sa.key"]).not.toBe(data(first, "service-account")["sa.key"]);
    expect(pemCount(data(replaced, "ca")["ca.crt"])).toBe(1);
    // The kubeconfig handed out before trusts the old CA alone and holds a certificate it signed: refused
    // both ways; the new one works.
    expect(await handshake(serverOf(replaced), oldClient)).not.toBe("ok");
    expect(await handshake(serverOf(replaced), clientOf(replaced))).toBe("ok");
    // The same token again: nothing is written. Another token: replaced again.
    expect((await planCredentials(withToken("incident-1"), replaced, T0 + 2 * DAY)).writes).toEqual([]);
    const again = await planCredentials(withToken("incident-2"), replaced, T0 + 3 * DAY);
    expect(written(again)).toEqual([...ROLLED, "service-account"].sort());
    // Taking the token out keeps what it made.
    expect((await planCredentials(withToken(undefined), replaced, T0 + 2 * DAY)).writes).toEqual([]);
  });

  it("changes nothing for a new cluster that has a token from the start, and leaves a shared etcd's CA", async () => {
    const created = await planCredentials(withToken("incident-1"), new Map(), T0);
    expect(created.records.find((r) => r.name === "ca")?.action).toBe("created");
    const host = applied(new Map(), created);
    expect((await planCredentials(withToken("incident-1"), host, T0 + DAY)).writes).toEqual([]);
    // A shared etcd's CA is every sharing cluster's: one cluster's token does not replace it.
    const shared = applied(new Map(), await planCredentials(withToken(undefined, true), new Map(), T0));
    const plan = await planCredentials(withToken("incident-1", true), shared, T0 + DAY);
    expect(written(plan)).toContain("ca");
    expect(written(plan)).not.toContain("etcd-ca");
  });
});
