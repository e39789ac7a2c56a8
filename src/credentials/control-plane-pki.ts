import { controlPlaneEndpoints } from "../manifests/controlplane/endpoints.js";
import { KUBECONFIG_DIR, PKI_SECRETS, REPLACED_FOR_KEY } from "../manifests/controlplane/pki-layout.js";
import type { CredentialAction, CredentialRecord } from "../model/controlplane/credential-record.js";
import type { HostedControlPlane } from "../model/controlplane/hosted-control-plane.js";
import { parseDuration } from "../model/duration.js";
import {
  authorityData,
  type Overlap,
  readOverlap,
  rolloverDue,
  startOverlap,
  trustBundle,
} from "./ca-rollover.js";
import { KeptPlans } from "./kept-plans.js";
import {
  fileKubeconfigText,
  type GeneratedKubeconfig,
  KUBECONFIG_FILES,
  kubeconfigText,
  readGeneratedKubeconfig,
} from "./kubeconfig-text.js";
import {
  type CertificateRequest,
  createCertificateAuthority,
  fingerprint,
  generateKeyPair,
  type Issued,
  issueCertificate,
  namesOf,
  publicKeyFingerprint,
  readIssued,
  signedBy,
  splitChain,
  withChain,
} from "./x509.js";

/** A Secret's data as text, by key. */
export type SecretData = Readonly<Record<string, string>>;

/** What the host holds now: each Secret's data by "namespace/name" (absent: no such Secret). */
export type ExistingSecrets = ReadonlyMap<string, SecretData>;

/** The Secrets to write, and what each credential is now. */
export interface CredentialPlan {
  readonly writes: readonly {
    readonly namespace: string;
    readonly name: string;
    readonly data: SecretData;
  }[];
  readonly records: readonly CredentialRecord[];
}

const DAY_MS = 86_400_000;

/**
 * Brings one hosted control plane's credentials up to date against what its host holds: every
 * missing one is created; a certificate expiring within renewBefore is renewed; one its CA no longer
 * signs, or whose names or server no longer match the control plane's exposure, is re-issued. A CA
 * is rolled over once it would no longer outlive a certificate it signs (ca-rollover.ts): a new CA
 * signs everything again while the previous one stays trusted, and the new one is served
 * cross-signed by it, until the previous CA expires. What is current is kept byte for byte. `etcd`
 * is the etcd CA when another plane sharing the etcd already ensured it.
 */
export async function planCredentials(
  plane: HostedControlPlane,
  existing: ExistingSecrets,
  now: number,
  etcd?: Authority,
): Promise<PlaneCredentialPlan> {
  const renewBeforeMs = parseDuration(plane.certificates.renewBefore) ?? 30 * DAY_MS;
  const key = KeptPlans.key(
    plane,
    existing,
    etcd ? { pem: etcd.ca.certificatePem + etcd.trustPem + etcd.chainPem, changed: etcd.changed } : undefined,
  );
  const kept = keptPlans.get(key, now);
  if (kept) return kept;
  const { plan, revisitAt } = await makePlan(plane, existing, now, renewBeforeMs, etcd);
  if (plan.writes.length === 0) keptPlans.set(key, plan, revisitAt);
  return plan;
}

/** A plan with the etcd CA it used, which the next plane sharing that etcd is given. */
export type PlaneCredentialPlan = CredentialPlan & { readonly etcdCa: Authority };

// Plans that wrote nothing, for up to this many control planes (a few meta clusters' worth).
const keptPlans = new KeptPlans<PlaneCredentialPlan>(8192);

async function makePlan(
  plane: HostedControlPlane,
  existing: ExistingSecrets,
  now: number,
  renewBeforeMs: number,
  etcd: Authority | undefined,
): Promise<{ plan: PlaneCredentialPlan; revisitAt: number }> {
  const validityMs = parseDuration(plane.certificates.validity) ?? 365 * DAY_MS;
  const context: Context = {
    plane,
    existing,
    now,
    validityMs,
    renewBeforeMs,
    writes: [],
    records: [],
    revisitAt: Number.POSITIVE_INFINITY,
  };
  const endpoints = controlPlaneEndpoints(plane);
  const { namespace } = plane;
  const ca = await ensureAuthority(context, namespace, PKI_SECRETS.ca.name, `${plane.cluster}-ca`);
  const frontProxy = await ensureAuthority(
    context,
    namespace,
    PKI_SECRETS.frontProxyCa.name,
    `${plane.cluster}-front-proxy-ca`,
  );
  // A shared etcd's CA is every sharing cluster's: one cluster's replaceCAs leaves it.
  const etcdCa =
    etcd ??
    (await ensureAuthority(
      context,
      plane.etcd.namespace,
      "etcd-ca",
      `${plane.etcd.name}-etcd-ca`,
      plane.etcd.mode === "Dedicated",
    ));
  const leaf = (
    name: string,
    at: string,
    request: Omit<CertificateRequest, "validityMs">,
    by: Authority,
    extra?: SecretData,
  ) =>
    ensureLeaf(context, { namespace: at, name, request: { ...request, validityMs }, authority: by, extra });
  await leaf(
    PKI_SECRETS.apiServer.name,
    namespace,
    { commonName: "kube-apiserver", names: endpoints.apiServerSANs, usage: "server" },
    ca,
  );
  await leaf(
    PKI_SECRETS.frontProxyClient.name,
    namespace,
    { commonName: "front-proxy-client", usage: "client" },
    frontProxy,
  );
  const etcdCaPem = { "ca.crt": etcdCa.trustPem };
  await leaf(
    PKI_SECRETS.etcdClient.name,
    namespace,
    { commonName: "kube-apiserver-etcd-client", usage: "client" },
    etcdCa,
    etcdCaPem,
  );
  if (!etcd)
    await leaf(
      PKI_SECRETS.etcdServer.name,
      plane.etcd.namespace,
      { commonName: "etcd", names: endpoints.etcdSANs, usage: "server-and-client" },
      etcdCa,
      etcdCaPem,
    );
  await ensureServiceAccountKey(context);
  const kubeconfig = (
    name: string,
    user: string,
    organization: string | undefined,
    server: string,
    files?: string,
  ) =>
    ensureKubeconfig(context, {
      name,
      server,
      ca,
      request: { commonName: user, ...(organization ? { organization } : {}), usage: "client", validityMs },
      ...(files ? { files } : {}),
    });
  await kubeconfig(
    PKI_SECRETS.adminKubeconfig.name,
    "kubernetes-admin",
    "system:masters",
    endpoints.external,
  );
  await kubeconfig(
    PKI_SECRETS.controllerManagerKubeconfig.name,
    "system:kube-controller-manager",
    undefined,
    endpoints.inHost,
    KUBECONFIG_DIR,
  );
  await kubeconfig(
    PKI_SECRETS.schedulerKubeconfig.name,
    "system:kube-scheduler",
    undefined,
    endpoints.inHost,
    KUBECONFIG_DIR,
  );
  return { plan: { writes: context.writes, records: context.records, etcdCa }, revisitAt: context.revisitAt };
}

interface Context {
  readonly plane: HostedControlPlane;
  readonly existing: ExistingSecrets;
  readonly now: number;
  readonly validityMs: number;
  readonly renewBeforeMs: number;
  readonly writes: { namespace: string; name: string; data: SecretData }[];
  readonly records: CredentialRecord[];
  /** When a plan that wrote nothing is due to be made again: a renewal, a rollover, an overlap's end. */
  revisitAt: number;
}

/** A CA, whether it is new this pass (everything it signs is then re-issued), and what it is trusted and served as. */
export interface Authority {
  readonly ca: Issued;
  readonly changed: boolean;
  /** What the components trust (ca.crt): the CA, and the previous one during a rollover's overlap. */
  readonly trustPem: string;
  /** What follows each certificate it signs in that certificate's file: its cross-signed certificate during an overlap, else nothing. */
  readonly chainPem: string;
}

function authorityOf(ca: Issued, overlap: Overlap | undefined, changed: boolean): Authority {
  return { ca, changed, trustPem: trustBundle(ca, overlap), chainPem: overlap?.crossPem ?? "" };
}

function revisit(context: Context, at: number): void {
  context.revisitAt = Math.min(context.revisitAt, at);
}

function sameData(data: SecretData | undefined, wanted: SecretData): boolean {
  const keys = Object.keys(wanted);
  return (
    data !== undefined && Object.keys(data).length === keys.length && keys.every((k) => data[k] === wanted[k])
  );
}

function record(context: Context, entry: CredentialRecord, data?: SecretData): void {
  context.records.push(entry);
  if (data) context.writes.push({ namespace: entry.namespace, name: entry.name, data });
}

function expiring(context: Context, notAfter: Date): boolean {
  revisit(context, notAfter.getTime() - context.renewBeforeMs);
  return notAfter.getTime() - context.now <= context.renewBeforeMs;
}

async function ensureAuthority(
  context: Context,
  namespace: string,
  name: string,
  commonName: string,
  replaceable = true,
): Promise<Authority> {
  const data = context.existing.get(`${namespace}/${name}`);
  const current = data ? await readIssued(data["tls.crt"] ?? "", data["tls.key"] ?? "") : undefined;
  const base = { namespace, name };
  const { now, validityMs, renewBeforeMs } = context;
  const token = replaceable ? context.plane.certificates.replaceCAs : undefined;
  if (current && token !== undefined && data?.[REPLACED_FOR_KEY] !== token)
    return newAuthority(context, base, commonName, { replaced: current, token });
  if (current && !rolloverDue(current.certificate.notAfter.getTime(), now, validityMs, renewBeforeMs)) {
    const overlap = await readOverlap(data ?? {}, current, now);
    revisit(context, current.certificate.notAfter.getTime() - validityMs - renewBeforeMs);
    if (overlap) revisit(context, overlap.endsAt);
    // Kept; written again only when its trust bundle is not what it should be (an overlap that ended).
    const wanted = { ...authorityData(current, overlap), ...replacedFor(data?.[REPLACED_FOR_KEY]) };
    record(
      context,
      { ...base, action: "kept", ...facts(current) },
      sameData(data, wanted) ? undefined : wanted,
    );
    return authorityOf(current, overlap, false);
  }
  return newAuthority(context, base, commonName, {
    ...(current ? { current } : {}),
    present: data !== undefined,
    ...(token !== undefined ? { token } : {}),
  });
}

// The Secret key that records the replaceCAs token a key was made for, if one was.
function replacedFor(token: string | undefined): SecretData {
  return token === undefined ? {} : { [REPLACED_FOR_KEY]: token };
}

/**
 * What a new CA replaces: `current`, rolled over (trusted beside its successor until it expires);
 * `replaced`, at once for the replaceCAs `token` (no overlap: it is trusted no more); or nothing —
 * the first, or one replacing what did not parse (`present`).
 */
interface Replacing {
  readonly current?: Issued;
  readonly replaced?: Issued;
  readonly present?: boolean;
  readonly token?: string;
}

// A CA made anew: the first, one rolled over from `current`, one replacing a compromised one, or one
// replacing what did not parse.
async function newAuthority(
  context: Context,
  base: { readonly namespace: string; readonly name: string },
  commonName: string,
  replacing: Replacing,
): Promise<Authority> {
  const { now, validityMs } = context;
  const { current, replaced, token } = replacing;
  // A CA lives ten times as long as what it signs. A rolled-over or replaced one has a name of its
  // own, so a chain through the cross-signed certificate never mistakes one CA for the other.
  const day = new Date(now).toISOString().slice(0, 10).replaceAll("-", "");
  const ca = await createCertificateAuthority(
    {
      commonName: current || replaced ? `${commonName}-${day}` : commonName,
      usage: "ca",
      validityMs: validityMs * 10,
    },
    now,
  );
  const overlap = await startOverlap(ca, current, now);
  if (overlap) revisit(context, overlap.endsAt);
  const { action, reason } = newAuthorityRecord(replacing, overlap);
  record(
    context,
    { ...base, action, ...(reason ? { reason } : {}), ...facts(ca) },
    { ...authorityData(ca, overlap), ...replacedFor(token) },
  );
  return authorityOf(ca, overlap, true);
}

// What the record of a new CA says it did, and why.
function newAuthorityRecord(
  { current, replaced, present, token }: Replacing,
  overlap: Overlap | undefined,
): { action: CredentialAction; reason?: string } {
  if (replaced)
    return {
      action: "reissued",
      reason: `replaced at once for replaceCAs ${token ?? ""}: the previous CA is trusted no more`,
    };
  if (current)
    return {
      action: "renewed",
      reason: `expires ${current.certificate.notAfter.toISOString()}${overlap ? ", trusted beside its successor until then" : ""}`,
    };
  return present ? { action: "reissued", reason: "it did not parse" } : { action: "created" };
}

interface Leaf {
  readonly namespace: string;
  readonly name: string;
  readonly request: CertificateRequest;
  readonly authority: Authority;
  readonly extra?: SecretData | undefined;
}

async function ensureLeaf(context: Context, leaf: Leaf): Promise<void> {
  const { namespace, name, request, authority, extra } = leaf;
  const data = context.existing.get(`${namespace}/${name}`);
  const { first, rest } = splitChain(data?.["tls.crt"] ?? "");
  const current = data ? await readIssued(first, data["tls.key"] ?? "") : undefined;
  const why = await leafTrouble(context, current, authority, request, data !== undefined, rest);
  const extraCurrent = Object.entries(extra ?? {}).every(([key, value]) => data?.[key] === value);
  if (current && why === undefined && extraCurrent) {
    record(context, { namespace, name, action: "kept", ...facts(current) });
    return;
  }
  const issued = await issueCertificate(request, authority.ca, context.now);
  const action: CredentialAction = !data ? "created" : why?.startsWith("expires") ? "renewed" : "reissued";
  const reason = data ? (why ?? "its CA's certificate changed") : undefined;
  record(
    context,
    { namespace, name, action, ...(reason ? { reason } : {}), ...facts(issued) },
    {
      "tls.crt": withChain(issued.certificatePem, authority.chainPem),
      "tls.key": issued.key.privatePem,
      ...extra,
    },
  );
}

// Why a certificate must be issued again, or undefined when it is current. `chain` is what follows
// it in its file.
async function leafTrouble(
  context: Context,
  current: Issued | undefined,
  authority: Authority,
  request: CertificateRequest,
  present: boolean,
  chain: string,
): Promise<string | undefined> {
  if (!current) return present ? "it did not parse" : "missing";
  if (authority.changed || !(await signedBy(current.certificate, authority.ca.certificate)))
    return "its CA changed";
  if (expiring(context, current.certificate.notAfter))
    return `expires ${current.certificate.notAfter.toISOString()}`;
  if (chain !== authority.chainPem)
    return authority.chainPem === "" ? "its CA's previous one expired" : "its CA is rolling over";
  const wanted = [...(request.names ?? [])].sort();
  if (JSON.stringify(namesOf(current.certificate)) !== JSON.stringify(wanted))
    return "the names it is reached by changed";
  return undefined;
}

async function ensureServiceAccountKey(context: Context): Promise<void> {
  const { namespace } = context.plane;
  const name = PKI_SECRETS.serviceAccount.name;
  const data = context.existing.get(`${namespace}/${name}`);
  const token = context.plane.certificates.replaceCAs;
  const present = data?.["sa.key"] && data["sa.pub"];
  const replace = present && token !== undefined && data[REPLACED_FOR_KEY] !== token;
  if (present && !replace) {
    record(context, {
      namespace,
      name,
      action: "kept",
      fingerprint: publicKeyFingerprint(data["sa.pub"] ?? ""),
    });
    return;
  }
  // The service-account key never expires: a new one invalidates every token the cluster issued,
  // which is what replaceCAs asks for.
  const key = await generateKeyPair();
  record(
    context,
    {
      namespace,
      name,
      action: data ? "reissued" : "created",
      ...(replace
        ? { reason: `replaced at once for replaceCAs ${token}: tokens it signed validate no more` }
        : {}),
      fingerprint: publicKeyFingerprint(key.publicPem),
    },
    { "sa.key": key.privatePem, "sa.pub": key.publicPem, ...replacedFor(token) },
  );
}

interface KubeconfigRequest {
  readonly name: string;
  readonly server: string;
  readonly ca: Authority;
  readonly request: CertificateRequest;
  /**
   * For a component in the host: the directory its Secret is mounted in. The kubeconfig then names
   * the CA, certificate and key as files of the Secret beside it, which client-go reads again when
   * they change — a renewal reaches the running component.
   */
  readonly files?: string;
}

async function ensureKubeconfig(context: Context, wanted: KubeconfigRequest): Promise<void> {
  if (wanted.files !== undefined) return ensureFileKubeconfig(context, { ...wanted, files: wanted.files });
  const { namespace } = context.plane;
  const { name, server, ca, request } = wanted;
  const data = context.existing.get(`${namespace}/${name}`);
  const current = data?.kubeconfig ? readGeneratedKubeconfig(data.kubeconfig) : undefined;
  const chain = splitChain(current?.certificatePem ?? "");
  const issued = current ? await readIssued(chain.first, current.keyPem) : undefined;
  // Anything but what gitfleet writes (a token, a file, a plugin someone added in the host) goes.
  const written = (content: { certificatePem: string; keyPem: string }) =>
    kubeconfigText({
      cluster: context.plane.cluster,
      server,
      caPem: ca.trustPem,
      user: request.commonName,
      ...content,
    });
  const why =
    (await leafTrouble(context, issued, ca, request, data !== undefined, chain.rest)) ??
    (current ? kubeconfigTrouble(current, data?.kubeconfig, wanted, written(current)) : undefined);
  if (issued && !why) {
    record(context, { namespace, name, action: "kept", ...facts(issued) });
    return;
  }
  const client = await issueCertificate(request, ca.ca, context.now);
  const text = written({
    certificatePem: withChain(client.certificatePem, ca.chainPem),
    keyPem: client.key.privatePem,
  });
  const action: CredentialAction = !data ? "created" : why?.startsWith("expires") ? "renewed" : "reissued";
  record(
    context,
    { namespace, name, action, ...(data && why ? { reason: why } : {}), ...facts(client) },
    { kubeconfig: text },
  );
}

// Why a kubeconfig whose certificate is current is written again, or undefined when it is kept.
function kubeconfigTrouble(
  current: GeneratedKubeconfig,
  text: string | undefined,
  { server, ca }: KubeconfigRequest,
  written: string,
): string | undefined {
  if (current.server !== server || current.caPem !== ca.trustPem) return "its server or CA changed";
  if (text !== written) return "it held what gitfleet does not write";
  return undefined;
}

async function ensureFileKubeconfig(
  context: Context,
  wanted: KubeconfigRequest & { readonly files: string },
): Promise<void> {
  const { namespace } = context.plane;
  const { name, server, ca, request, files } = wanted;
  const data = context.existing.get(`${namespace}/${name}`);
  const text = fileKubeconfigText(
    { cluster: context.plane.cluster, server, user: request.commonName },
    files,
  );
  const chain = splitChain(data?.[KUBECONFIG_FILES.certificate] ?? "");
  const issued = data ? await readIssued(chain.first, data[KUBECONFIG_FILES.key] ?? "") : undefined;
  const why = await fileKubeconfigTrouble(context, data, issued, wanted, text, chain.rest);
  if (issued && !why) {
    record(context, { namespace, name, action: "kept", ...facts(issued) });
    return;
  }
  const client = await issueCertificate(request, ca.ca, context.now);
  const action: CredentialAction = !data ? "created" : why?.startsWith("expires") ? "renewed" : "reissued";
  record(
    context,
    { namespace, name, action, ...(data && why ? { reason: why } : {}), ...facts(client) },
    {
      kubeconfig: text,
      [KUBECONFIG_FILES.ca]: ca.trustPem,
      [KUBECONFIG_FILES.certificate]: withChain(client.certificatePem, ca.chainPem),
      [KUBECONFIG_FILES.key]: client.key.privatePem,
    },
  );
}

// Why a component's kubeconfig Secret is written again, or undefined when it is kept.
async function fileKubeconfigTrouble(
  context: Context,
  data: SecretData | undefined,
  issued: Issued | undefined,
  { ca, request }: KubeconfigRequest,
  text: string,
  chain: string,
): Promise<string | undefined> {
  // A Secret from before kubeconfigs named their files holds the kubeconfig alone.
  if (data && data[KUBECONFIG_FILES.certificate] === undefined)
    return "its kubeconfig is not the one gitfleet writes";
  const why = await leafTrouble(context, issued, ca, request, data !== undefined, chain);
  if (why) return why;
  if (data?.[KUBECONFIG_FILES.ca] !== ca.trustPem) return "its CA changed";
  if (data?.kubeconfig !== text) return "its kubeconfig is not the one gitfleet writes";
  return undefined;
}

function facts(issued: Issued): { fingerprint: string; notAfter: string } {
  return {
    fingerprint: fingerprint(issued.certificate),
    notAfter: issued.certificate.notAfter.toISOString(),
  };
}
