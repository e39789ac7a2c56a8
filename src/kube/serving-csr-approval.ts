import { asList, asMap, type JsonMap } from "../apimachinery/json.js";
import {
  type CsrFacts,
  judgeServingCsr,
  KUBELET_SERVING_SIGNER,
  type NodeFacts,
  nodeOfRequester,
} from "../credentials/serving-csr.js";
import type { ServingCsrRecord } from "../model/controlplane/credential-record.js";
import type { HostedControlPlane } from "../model/controlplane/hosted-control-plane.js";
import { NODE_POOL_LABEL } from "../model/controlplane/node-pools.js";
import { oneLine } from "../model/one-line.js";
import type { MemberClient } from "./member-client.js";

/** The most pending serving CSRs one pass looks at; the rest wait for the next. */
export const MAX_SERVING_CSRS_PER_PASS = 100;

const CSR_PATH = "/apis/certificates.k8s.io/v1/certificatesigningrequests";

/**
 * Approves the pending kubelet serving CSRs of a hosted cluster that the rule accepts
 * (credentials/serving-csr.ts), through the approval subresource, as `kubectl certificate approve`
 * does; kube-controller-manager then signs them. Returns what it did with each pending one it looked
 * at: approved, or left pending and why (nothing is denied: a node whose addresses are not reported
 * yet asks again).
 */
export async function approveServingCsrs(
  hosted: MemberClient,
  plane: HostedControlPlane,
  now: number,
): Promise<ServingCsrRecord[]> {
  const pending: JsonMap[] = [];
  await hosted.pages(
    "certificates.k8s.io/v1",
    "CertificateSigningRequest",
    { fieldSelector: `spec.signerName=${KUBELET_SERVING_SIGNER}`, limit: 100 },
    (items) => {
      for (const item of items)
        if (pending.length < MAX_SERVING_CSRS_PER_PASS && !decided(item)) pending.push(item);
    },
  );
  const pools = new Set(plane.nodePools.map((p) => p.name));
  const nodes = new Map<string, NodeFacts | undefined>();
  const records: ServingCsrRecord[] = [];
  for (const item of pending) {
    const facts = csrFacts(item);
    const node = nodeOfRequester(facts.username);
    if (node !== undefined && !nodes.has(node)) nodes.set(node, await nodeFacts(hosted, node));
    const decision = await judgeServingCsr(facts, (name) => nodes.get(name), pools);
    if (!decision) continue;
    const record = decision.approved ? await approved(hosted, item, decision, now) : decision;
    records.push(record.approved || !recent(item, now) ? record : { ...record, recent: true });
  }
  return records;
}

/**
 * How long a pending serving CSR keeps its host coming back at the status interval: a kubelet asks
 * right after it registers, often before its Node reports the addresses the rule checks, and is
 * approved on a later pass. One still pending after this waits for the ordinary resync (the
 * controller-manager's CSR cleaner removes pending ones after a day).
 */
export const RECENT_CSR_MS = 15 * 60_000;

function recent(csr: JsonMap, now: number): boolean {
  const created = Date.parse(String(asMap(csr.metadata).creationTimestamp ?? ""));
  return !Number.isNaN(created) && now - created < RECENT_CSR_MS;
}

function decided(csr: JsonMap): boolean {
  return asList(asMap(csr.status).conditions).some((c) =>
    ["Approved", "Denied"].includes(String(asMap(c).type)),
  );
}

// What the API server says of a CSR: the requester it authenticated, never what the request claims.
function csrFacts(csr: JsonMap): CsrFacts {
  const spec = asMap(csr.spec);
  const strings = (value: unknown) => asList(value).filter((v): v is string => typeof v === "string");
  const request =
    typeof spec.request === "string" ? Buffer.from(spec.request, "base64").toString("utf8") : "";
  return {
    name: oneLine(String(asMap(csr.metadata).name ?? ""), 253),
    signerName: String(spec.signerName ?? ""),
    username: String(spec.username ?? ""),
    groups: strings(spec.groups),
    usages: strings(spec.usages),
    request,
    decided: decided(csr),
  };
}

async function nodeFacts(hosted: MemberClient, name: string): Promise<NodeFacts | undefined> {
  const node = await hosted.get({ apiVersion: "v1", kind: "Node", namespace: undefined, name });
  if (!node) return undefined;
  const pool = asMap(asMap(node.metadata).labels)[NODE_POOL_LABEL];
  const addresses = asList(asMap(node.status).addresses)
    .map((a) => asMap(a))
    .map((a) => ({ type: String(a.type ?? ""), address: String(a.address ?? "") }));
  return { name, pool: typeof pool === "string" ? pool : undefined, addresses };
}

// The approval written, or the CSR left pending with why it could not be (it changed meanwhile: the next pass).
async function approved(
  hosted: MemberClient,
  csr: JsonMap,
  decision: ServingCsrRecord,
  now: number,
): Promise<ServingCsrRecord> {
  try {
    await approve(hosted, csr, decision.node ?? "", now);
    return decision;
  } catch (error) {
    const why = oneLine(error instanceof Error ? error.message : String(error), 200);
    return { ...decision, approved: false, reason: `approving it failed: ${why}` };
  }
}

async function approve(hosted: MemberClient, csr: JsonMap, node: string, now: number): Promise<void> {
  const status = asMap(csr.status);
  const condition = {
    type: "Approved",
    status: "True",
    reason: "GitfleetNodePoolRule",
    message: `node ${node} of a node pool asked for the names it reports`,
    lastUpdateTime: new Date(now).toISOString().replace(/\.\d+Z$/, "Z"),
  };
  const name = encodeURIComponent(String(asMap(csr.metadata).name));
  await hosted.raw("PUT", `${CSR_PATH}/${name}/approval`, {
    ...csr,
    status: { ...status, conditions: [...asList(status.conditions), condition] },
  });
}
