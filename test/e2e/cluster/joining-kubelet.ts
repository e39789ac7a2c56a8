import "reflect-metadata";
import { createHmac, timingSafeEqual, webcrypto } from "node:crypto";
import { request } from "node:https";
import * as x509 from "@peculiar/x509";
import { asList, asMap, type JsonMap } from "../../../src/apimachinery/json.js";
import { caCertHash } from "../../../src/credentials/bootstrap-tokens.js";
import type { MemberClient } from "../../../src/kube/member-client.js";

/**
 * A machine joining a hosted cluster exactly as `kubeadm join` and a kubelet do, with nothing but
 * what the host's join-<pool> Secret holds (the token, the CA's hash, the endpoint):
 *
 * 1. discovery: reads kube-public/cluster-info without trusting the server yet, checks the bootstrap
 *    signer's signature of it with the token (jws-kubeconfig-<id>, HS256) and the CA against the pin;
 * 2. TLS bootstrapping: sends a CSR for system:node:<name> authenticated by the bootstrap token, and
 *    waits for kube-controller-manager to approve and sign it;
 * 3. registers its Node with its own client certificate (the Node authorizer and NodeRestriction
 *    decide what it may do from then on).
 */
export interface JoinRequest {
  readonly host: MemberClient;
  /** The control plane's namespace in the host. */
  readonly namespace: string;
  readonly pool: string;
  readonly node: string;
  /** Join with this token instead of the Secret's current one (an old token, to see it refused). */
  readonly token?: string;
  /** The addresses the Node reports of itself (status.addresses), as a kubelet registers them. */
  readonly addresses?: readonly { readonly type: string; readonly address: string }[];
}

export interface JoinedNode {
  readonly node: string;
  readonly token: string;
  readonly certificatePem: string;
  readonly keyPem: string;
  readonly caPem: string;
  readonly server: string;
  /** The kubelet version the join Secret says the pool's machines run. */
  readonly kubeletVersion: string;
  /** The Node as the API server answered its registration. */
  readonly registered: JsonMap;
}

/** The API server refused the machine (401: an expired or unknown token). */
export class JoinRefused extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const ALGORITHM = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;

export async function joinNode(join: JoinRequest): Promise<JoinedNode> {
  const secret = await join.host.get({
    apiVersion: "v1",
    kind: "Secret",
    namespace: join.namespace,
    name: `join-${join.pool}`,
  });
  const data = asMap(secret?.data);
  const read = (key: string) => Buffer.from(String(data[key] ?? ""), "base64").toString("utf8");
  const token = join.token ?? read("token");
  const server = read("server");
  const pin = read("ca-cert-hash");
  if (!token || !server || !pin) throw new Error(`the host holds no join Secret for pool ${join.pool}`);
  const caPem = await discover(server, token, pin);
  const { keys, request } = await nodeCsr(join.node);
  const bootstrap = { ca: caPem, token };
  const created = await call(
    server,
    "POST",
    "/apis/certificates.k8s.io/v1/certificatesigningrequests",
    bootstrap,
    {
      apiVersion: "certificates.k8s.io/v1",
      kind: "CertificateSigningRequest",
      metadata: { generateName: "node-csr-" },
      spec: {
        request,
        signerName: "kubernetes.io/kube-apiserver-client-kubelet",
        usages: ["digital signature", "client auth"],
      },
    },
  );
  const name = String(asMap(created.metadata).name);
  const certificatePem = await signed(server, name, bootstrap);
  const keyPem = pem("PRIVATE KEY", await webcrypto.subtle.exportKey("pkcs8", keys.privateKey));
  const flags = kubeletFlags(read("kubelet-extra-args"));
  const registered = await call(
    server,
    "POST",
    "/api/v1/nodes",
    { ca: caPem, certificatePem, keyPem },
    {
      apiVersion: "v1",
      kind: "Node",
      metadata: { name: join.node, labels: flags.labels },
      spec: { taints: flags.taints },
      ...(join.addresses ? { status: { addresses: join.addresses.map((a) => ({ ...a })) } } : {}),
    },
  );
  const kubeletVersion = read("kubelet-version");
  return { node: join.node, token, certificatePem, keyPem, caPem, server, kubeletVersion, registered };
}

/**
 * A kubelet's request for its serving certificate (serverTLSBootstrap), sent with its own client
 * certificate: a CSR for the kubelet-serving signer naming these DNS names and IPs. Returns its name.
 */
export async function requestServingCertificate(
  node: JoinedNode,
  names: { readonly dns?: readonly string[]; readonly ip?: readonly string[] },
): Promise<string> {
  const { request } = await nodeCsr(node.node, [
    new x509.SubjectAlternativeNameExtension([
      ...(names.dns ?? []).map((value) => ({ type: "dns" as const, value })),
      ...(names.ip ?? []).map((value) => ({ type: "ip" as const, value })),
    ]),
  ]);
  const created = await asNode(node, "POST", "/apis/certificates.k8s.io/v1/certificatesigningrequests", {
    apiVersion: "certificates.k8s.io/v1",
    kind: "CertificateSigningRequest",
    metadata: { generateName: "csr-" },
    spec: {
      request,
      signerName: "kubernetes.io/kubelet-serving",
      usages: ["digital signature", "server auth"],
    },
  });
  return String(asMap(created.metadata).name);
}

// A fresh key pair and a PKCS#10 request for system:node:<node> with these extensions, as a CSR's
// spec.request carries it (base64 of the PEM).
async function nodeCsr(
  node: string,
  extensions: x509.Extension[] = [],
): Promise<{ keys: webcrypto.CryptoKeyPair; request: string }> {
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, [
    "sign",
    "verify",
  ])) as webcrypto.CryptoKeyPair;
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: `CN=system:node:${node}, O=system:nodes`,
    keys,
    signingAlgorithm: ALGORITHM,
    extensions,
  });
  return { keys, request: Buffer.from(csr.toString("pem")).toString("base64") };
}

/** A CSR as the node reads it back: its certificate once signed, and its conditions. */
export async function readCsr(
  node: JoinedNode,
  name: string,
): Promise<{ certificatePem?: string; conditions: JsonMap[] }> {
  const status = asMap(
    (await asNode(node, "GET", `/apis/certificates.k8s.io/v1/certificatesigningrequests/${name}`)).status,
  );
  const certificate =
    typeof status.certificate === "string" && status.certificate !== "" ? status.certificate : undefined;
  return {
    ...(certificate ? { certificatePem: Buffer.from(certificate, "base64").toString("utf8") } : {}),
    conditions: asList(status.conditions).map((c) => asMap(c)),
  };
}

// --node-labels=a=b,c=d --register-with-taints=k=v:NoSchedule, as a kubelet reads them.
function kubeletFlags(args: string): { labels: Record<string, string>; taints: JsonMap[] } {
  const flag = (name: string) =>
    args
      .split(" ")
      .find((a) => a.startsWith(`--${name}=`))
      ?.slice(name.length + 3)
      .split(",")
      .filter(Boolean) ?? [];
  const labels = Object.fromEntries(flag("node-labels").map((l) => l.split("=") as [string, string]));
  const taints = flag("register-with-taints").map((t) => {
    const [keyValue, effect] = t.split(":") as [string, string];
    const [key = "", value] = keyValue.split("=");
    return { key, ...(value === undefined ? {} : { value }), effect };
  });
  return { labels, taints };
}

/** A request with the node's own certificate (what a kubelet sends from then on). */
export function asNode(node: JoinedNode, method: string, path: string, body?: JsonMap): Promise<JsonMap> {
  return call(
    node.server,
    method,
    path,
    { ca: node.caPem, certificatePem: node.certificatePem, keyPem: node.keyPem },
    body,
  );
}

// kubeadm's token discovery: cluster-info read without trust, then trusted by its signature and pin.
async function discover(server: string, token: string, pin: string): Promise<string> {
  const [id, secret] = token.split(".") as [string, string];
  const deadline = Date.now() + 60_000;
  for (;;) {
    const configMap = await call(server, "GET", "/api/v1/namespaces/kube-public/configmaps/cluster-info", {
      insecure: true,
    });
    const data = asMap(configMap.data);
    const kubeconfig = data.kubeconfig;
    const jws = data[`jws-kubeconfig-${id}`];
    if (typeof kubeconfig === "string" && typeof jws === "string") {
      verifyDetachedJws(jws, kubeconfig, secret, id);
      const cluster = asMap(asMap((JSON.parse(kubeconfig) as { clusters: JsonMap[] }).clusters[0]).cluster);
      const caPem = Buffer.from(String(cluster["certificate-authority-data"]), "base64").toString("utf8");
      if (caCertHash(caPem) !== pin) throw new Error("cluster-info's CA does not match the pinned hash");
      return caPem;
    }
    // The bootstrap signer signs a new token's cluster-info within moments; until then there is no JWS.
    if (Date.now() > deadline) throw new JoinRefused(0, `cluster-info carries no signature for token ${id}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

function verifyDetachedJws(jws: string, payload: string, secret: string, id: string): void {
  const [header, empty, signature] = jws.split(".");
  if (header === undefined || empty !== "" || signature === undefined) throw new Error("not a detached JWS");
  const fields = JSON.parse(Buffer.from(header, "base64url").toString("utf8")) as {
    alg?: string;
    kid?: string;
  };
  if (fields.alg !== "HS256" || fields.kid !== id)
    throw new Error(`unexpected JWS header ${JSON.stringify(fields)}`);
  const expected = createHmac("sha256", secret)
    .update(`${header}.${Buffer.from(payload).toString("base64url")}`)
    .digest();
  const given = Buffer.from(signature, "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    throw new Error("cluster-info's signature does not verify with the token");
}

async function signed(server: string, csr: string, auth: Credentials): Promise<string> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const status = asMap(
      (await call(server, "GET", `/apis/certificates.k8s.io/v1/certificatesigningrequests/${csr}`, auth))
        .status,
    );
    if (typeof status.certificate === "string" && status.certificate !== "")
      return Buffer.from(status.certificate, "base64").toString("utf8");
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`CSR ${csr} was not approved and signed in 60 s`);
}

interface Credentials {
  readonly insecure?: boolean;
  readonly ca?: string;
  readonly token?: string;
  readonly certificatePem?: string;
  readonly keyPem?: string;
}

function call(
  server: string,
  method: string,
  path: string,
  auth: Credentials,
  body?: JsonMap,
): Promise<JsonMap> {
  const url = new URL(path, server);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        timeout: 10_000,
        rejectUnauthorized: !auth.insecure,
        ...(auth.ca ? { ca: auth.ca } : {}),
        ...(auth.certificatePem ? { cert: auth.certificatePem, key: auth.keyPem } : {}),
        headers: {
          accept: "application/json",
          ...(payload
            ? { "content-type": method === "PATCH" ? "application/merge-patch+json" : "application/json" }
            : {}),
          ...(auth.token ? { authorization: `Bearer ${auth.token}` } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve(JSON.parse(text) as JsonMap);
          else reject(new JoinRefused(status, `${method} ${path}: ${status} ${text.slice(0, 300)}`));
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error(`${method} ${path}: timed out`)));
    req.on("error", reject);
    if (payload) req.write(payload);
    req.end();
  });
}

function pem(label: string, der: ArrayBuffer): string {
  const body = Buffer.from(der)
    .toString("base64")
    .replace(/(.{64})/g, "$1\n")
    .replace(/\n$/, "");
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
}
