import { readFile } from "node:fs/promises";
import type { KubeConfig } from "@kubernetes/client-node";
import { stringify } from "yaml";
import { asList, asMap, type JsonMap } from "../apimachinery/json.js";
import { guessResource } from "../apimachinery/kinds.js";
import { oneLine } from "../model/one-line.js";
import { INVENTORY_NAMESPACE } from "../sync/inventory.js";
import { type AppliedResource, MEMBER_ACCOUNT } from "../sync/member-access.js";
import { MAX_KUBECONFIG_BYTES } from "./connections.js";
import type { MemberClient } from "./member-client.js";

/** The field manager of what `gitfleet join` creates in a member. */
export const JOIN_FIELD_MANAGER = "gitfleet-join";

/**
 * Where each kind is served in the member (discovery, through the admin's client), else as the
 * fleet's own CustomResourceDefinitions name it (a CRD the fleet installs is not served yet), else as
 * Kubernetes guesses a kind's resource. Reads only.
 */
export async function resolveResources(
  client: MemberClient | undefined,
  kinds: readonly { apiVersion: string; kind: string }[],
  crds: readonly JsonMap[],
): Promise<AppliedResource[]> {
  const declared = new Map<string, string>();
  for (const crd of crds) {
    const spec = asMap(crd.spec);
    const names = asMap(spec.names);
    if (typeof spec.group === "string" && typeof names.kind === "string" && typeof names.plural === "string")
      declared.set(`${spec.group}/${names.kind}`, names.plural);
  }
  const resolved: AppliedResource[] = [];
  for (const { apiVersion, kind } of kinds) {
    const group = apiVersion.includes("/") ? (apiVersion.split("/")[0] as string) : "";
    const served = await client?.resource(apiVersion, kind).catch(() => undefined);
    resolved.push({
      group,
      resource: served?.plural ?? declared.get(`${group}/${kind}`) ?? guessResource(kind),
    });
  }
  return resolved;
}

/** Creates or updates each object with server-side apply as `gitfleet-join`, in order (the namespace first). */
export async function applyAccess(client: MemberClient, objects: readonly JsonMap[]): Promise<void> {
  for (const object of objects) await client.apply(object, true, JOIN_FIELD_MANAGER);
}

/** A token for gitfleet's ServiceAccount from the member's TokenRequest API, bound to its expiry. */
export async function mintToken(
  client: MemberClient,
  expirationSeconds: number,
): Promise<{ token: string; expires: string }> {
  const answer = asMap(
    await client.raw(
      "POST",
      `/api/v1/namespaces/${INVENTORY_NAMESPACE}/serviceaccounts/${MEMBER_ACCOUNT}/token`,
      { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds } },
    ),
  );
  const status = asMap(answer.status);
  if (typeof status.token !== "string" || status.token === "" || status.token.length > 16_384)
    throw new Error(`${client.cluster} answered the token request without a token`);
  return { token: status.token, expires: oneLine(String(status.expirationTimestamp ?? "unknown"), 64) };
}

/** Where a member runs, from its nodes' well-known labels and provider IDs. */
export interface Topology {
  readonly provider?: string;
  readonly region?: string;
  /** Only when every node is in the one zone. */
  readonly zone?: string;
}

// Provider ID schemes (node.spec.providerID) and the provider names Clusters use.
const PROVIDERS: Readonly<Record<string, string>> = {
  aws: "aws",
  gce: "gcp",
  azure: "azure",
  alicloud: "alibaba",
  openstack: "openstack",
  vsphere: "vsphere",
  ibm: "ibm",
  oci: "oracle",
  digitalocean: "digitalocean",
  hcloud: "hetzner",
};

/** The member's topology from the first 500 nodes' labels and provider IDs (reads only). */
export async function readTopology(client: MemberClient): Promise<Topology> {
  const nodes = asList(asMap(await client.raw("GET", "/api/v1/nodes?limit=500")).items).map(asMap);
  const most = (values: string[]) => {
    const counts = new Map<string, number>();
    for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
    return [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0];
  };
  const label = (node: JsonMap, keys: string[]) => {
    const labels = asMap(asMap(node.metadata).labels);
    const found = keys
      .map((k) => labels[k])
      .find((v) => typeof v === "string" && /^[A-Za-z0-9._-]{1,63}$/.test(v));
    return found as string | undefined;
  };
  const regions = nodes.map((n) =>
    label(n, ["topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region"]),
  );
  const zones = nodes.map((n) =>
    label(n, ["topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"]),
  );
  const schemes = nodes.map((n) => /^([a-z0-9-]+):\/\//.exec(String(asMap(n.spec).providerID ?? ""))?.[1]);
  const provider = most(schemes.filter((s): s is string => s !== undefined).map((s) => PROVIDERS[s] ?? s));
  const region = most(regions.filter((r): r is string => r !== undefined));
  const distinctZones = new Set(zones);
  const zone = distinctZones.size === 1 ? [...distinctZones][0] : undefined;
  return { ...(provider ? { provider } : {}), ...(region ? { region } : {}), ...(zone ? { zone } : {}) };
}

/** How the admin's kubeconfig reaches the member: its server and what its TLS trusts. */
export interface MemberEndpoint {
  readonly server: string;
  readonly caData?: string;
  readonly tlsServerName?: string;
  readonly insecureSkipTlsVerify: boolean;
}

/** The admin context's endpoint, with a CA file read into data (bounded) so the new kubeconfig stands alone. */
export async function endpointOf(config: KubeConfig): Promise<MemberEndpoint> {
  const cluster = config.getCurrentCluster();
  if (!cluster) throw new Error("the admin kubeconfig's context names no cluster");
  let caData = cluster.caData;
  if (!caData && cluster.caFile) {
    const bytes = await readFile(cluster.caFile);
    if (bytes.length > MAX_KUBECONFIG_BYTES) throw new Error("the admin kubeconfig's CA file is too large");
    caData = bytes.toString("base64");
  }
  return {
    server: cluster.server,
    ...(caData ? { caData } : {}),
    ...(cluster.tlsServerName ? { tlsServerName: cluster.tlsServerName } : {}),
    insecureSkipTlsVerify: cluster.skipTLSVerify,
  };
}

/** A kubeconfig of one context, named after the cluster, that reaches the member with gitfleet's token. */
export function memberKubeconfig(cluster: string, endpoint: MemberEndpoint, token: string): string {
  return stringify(
    {
      apiVersion: "v1",
      kind: "Config",
      clusters: [
        {
          name: cluster,
          cluster: {
            server: endpoint.server,
            ...(endpoint.caData ? { "certificate-authority-data": endpoint.caData } : {}),
            ...(endpoint.tlsServerName ? { "tls-server-name": endpoint.tlsServerName } : {}),
            ...(endpoint.insecureSkipTlsVerify ? { "insecure-skip-tls-verify": true } : {}),
          },
        },
      ],
      users: [{ name: `gitfleet@${cluster}`, user: { token } }],
      contexts: [{ name: cluster, context: { cluster, user: `gitfleet@${cluster}` } }],
      "current-context": cluster,
    },
    { lineWidth: 0 },
  );
}
