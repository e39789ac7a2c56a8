import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import type { ServingCsrRecord } from "../model/controlplane/credential-record.js";
import { oneLine } from "../model/one-line.js";
import { X509_CRYPTO } from "./x509.js";

/** The signer of kubelet serving certificates; kube-controller-manager signs what is approved. */
export const KUBELET_SERVING_SIGNER = "kubernetes.io/kubelet-serving";

/** The most a CSR's request may hold before it is read (a kubelet's is well under 2 KiB). */
export const MAX_CSR_REQUEST_BYTES = 16 * 1024;

/** A CertificateSigningRequest as the hosted API server holds it: who asked, for what. */
export interface CsrFacts {
  readonly name: string;
  readonly signerName: string;
  /** The requester the API server authenticated (not what the request says). */
  readonly username: string;
  readonly groups: readonly string[];
  readonly usages: readonly string[];
  /** The PKCS#10 request, PEM. */
  readonly request: string;
  /** Approved or denied already. */
  readonly decided: boolean;
}

/** A registered Node: its pool label and the addresses its status reports. */
export interface NodeFacts {
  readonly name: string;
  readonly pool: string | undefined;
  readonly addresses: readonly { readonly type: string; readonly address: string }[];
}

const ALLOWED_USAGES = new Set(["digital signature", "key encipherment", "server auth"]);
const DNS_ADDRESSES = new Set(["Hostname", "InternalDNS", "ExternalDNS"]);
const IP_ADDRESSES = new Set(["InternalIP", "ExternalIP"]);

/** The node a requester authenticated as system:node:<name> is, or undefined for anyone else. */
export function nodeOfRequester(username: string): string | undefined {
  return /^system:node:([a-z0-9.-]{1,253})$/.exec(username)?.[1];
}

/**
 * The rule gitfleet approves kubelet serving certificates by (kube-controller-manager approves only
 * client certificates): the request comes from the node it names — authenticated as
 * system:node:<name> in system:nodes, the subject exactly CN=system:node:<name>, O=system:nodes —
 * asks only for serving usages, and every name in it is one the Node reports of itself (DNS names
 * among its Hostname/InternalDNS/ExternalDNS addresses, IPs among InternalIP/ExternalIP), none an
 * email or URI; the Node is in one of the cluster's pools, and the request's signature verifies.
 * Undefined: not a pending kubelet serving CSR. Anything else is left pending with the reason.
 */
export async function judgeServingCsr(
  csr: CsrFacts,
  nodeOf: (name: string) => NodeFacts | undefined,
  pools: ReadonlySet<string>,
): Promise<ServingCsrRecord | undefined> {
  if (csr.signerName !== KUBELET_SERVING_SIGNER || csr.decided) return undefined;
  const refuse = (reason: string, node?: string): ServingCsrRecord => ({
    csr: csr.name,
    ...(node === undefined ? {} : { node }),
    approved: false,
    reason,
  });
  const node = nodeOfRequester(csr.username);
  if (node === undefined || !csr.groups.includes("system:nodes"))
    return refuse("it was not requested by a node (system:node:<name> in system:nodes)");
  const usages = new Set(csr.usages);
  if (!usages.has("server auth") || [...usages].some((u) => !ALLOWED_USAGES.has(u)))
    return refuse(`it asks for usages ${[...usages].sort().join(", ")}, not server auth alone`, node);
  const parsed = parseRequest(csr.request);
  if (!parsed) return refuse("its request does not parse", node);
  const subject = JSON.stringify(parsed.subjectName.toJSON());
  if (subject !== JSON.stringify([{ CN: [`system:node:${node}`] }, { O: ["system:nodes"] }]))
    return refuse(`its subject is not CN=system:node:${node}, O=system:nodes`, node);
  const names = subjectAltNames(parsed);
  if (names.length === 0) return refuse("it names no DNS name or IP address", node);
  const other = names.find((n) => n.type !== "dns" && n.type !== "ip");
  if (other)
    return refuse(
      `it names a ${other.type} (${shown(other.value)}); only DNS names and IPs are served`,
      node,
    );
  const known = nodeOf(node);
  if (!known) return refuse(`node ${node} is not registered`, node);
  if (known.pool === undefined || !pools.has(known.pool))
    return refuse(`node ${node} is in no node pool of this cluster`, node);
  const unreported = names.find(
    (n) =>
      !known.addresses.some(
        (a) => a.address === n.value && (n.type === "dns" ? DNS_ADDRESSES : IP_ADDRESSES).has(a.type),
      ),
  );
  if (unreported)
    return refuse(`it names ${shown(unreported.value)}, which node ${node} does not report`, node);
  if (!(await parsed.verify(X509_CRYPTO))) return refuse("its signature does not verify", node);
  return { csr: csr.name, node, approved: true };
}

// A name from the request, as a reason may quote it: one bounded line.
function shown(value: string): string {
  return oneLine(value, 100);
}

function parseRequest(pem: string): x509.Pkcs10CertificateRequest | undefined {
  if (pem.length > MAX_CSR_REQUEST_BYTES) return undefined;
  try {
    return new x509.Pkcs10CertificateRequest(pem);
  } catch {
    return undefined;
  }
}

function subjectAltNames(csr: x509.Pkcs10CertificateRequest): { type: string; value: string }[] {
  try {
    const extension = csr.getExtension("2.5.29.17");
    if (!(extension instanceof x509.SubjectAlternativeNameExtension)) return [];
    return extension.names.items.map((item) => ({ type: item.type, value: item.value }));
  } catch {
    return [];
  }
}
