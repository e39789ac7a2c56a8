import type { JsonMap } from "../src/apimachinery/json.js";
import { MemberClient } from "../src/kube/member-client.js";
import { readCapacity } from "../src/kube/read-capacity.js";
import type { ApiResource } from "../src/sim/api-resources.js";
import { memberClientConfig } from "../src/sim/kubeconfig.js";
import { startMember } from "../src/sim/member-server.js";
import { peakRssMiB } from "./measure.js";

/**
 * Benchmark: reading a member's capacity at the single-cluster ceiling — 5,000 nodes and 150,000
 * pods (30 a node) in a simulated member — over HTTP, a page of 500 at a time, as the controller
 * and agents read it. Prints time, bytes read, heap and RSS; asserts nothing.
 */
const nodes = Number(process.env.BENCH_NODES ?? 5000);
const podsPerNode = Number(process.env.BENCH_PODS_PER_NODE ?? 30);
const member = await startMember({ name: "big" });
const { api } = member;
const resource = (plural: string) =>
  api.resources().find((r) => r.group === "" && r.name === plural) as ApiResource;
const [nodeResource, podResource] = [resource("nodes"), resource("pods")];
for (let n = 0; n < nodes; n++) {
  const name = `node-${String(n).padStart(5, "0")}`;
  const node: JsonMap = {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name,
      resourceVersion: api.store.nextVersion(),
      labels: {
        "kubernetes.io/hostname": name,
        "topology.kubernetes.io/zone": `zone-${n % 3}`,
        pool: n % 10 === 0 ? "gpu" : "general",
      },
    },
    spec: n % 10 === 0 ? { taints: [{ key: "nvidia.com/gpu", value: "true", effect: "NoSchedule" }] } : {},
    status: {
      allocatable: {
        cpu: "32",
        memory: "128Gi",
        pods: "110",
        ...(n % 10 === 0 ? { "nvidia.com/gpu": "8" } : {}),
      },
      conditions: [{ type: "Ready", status: "True" }],
    },
  };
  api.store.set({ resource: nodeResource, namespace: undefined, name }, node);
  for (let p = 0; p < podsPerNode; p++) {
    const podName = `app-${n}-${p}`;
    const namespace = `team-${p % 20}`;
    api.store.set(
      { resource: podResource, namespace, name: podName },
      {
        apiVersion: "v1",
        kind: "Pod",
        metadata: {
          name: podName,
          namespace,
          resourceVersion: api.store.nextVersion(),
          labels: { app: `app-${p}` },
        },
        spec: {
          nodeName: name,
          containers: [
            {
              name: "main",
              image: "registry.example.com/app:1.0.0",
              resources: { requests: { cpu: `${100 + (p % 8) * 50}m`, memory: `${256 * ((p % 4) + 1)}Mi` } },
            },
          ],
        },
        status: { phase: p % 15 === 0 ? "Succeeded" : "Running" },
      },
    );
  }
}
const client = new MemberClient("big", memberClientConfig(member), { timeoutMs: 60_000 });
// Bytes read: counted from the member's answers.
let bytes = 0;
const pages = client.pages.bind(client);
client.pages = (apiVersion, kind, options, each) =>
  pages(apiVersion, kind, options, (items) => {
    bytes += JSON.stringify(items).length;
    each(items);
  });
global.gc?.();
const heapBefore = process.memoryUsage().heapUsed;
process.stdout.write(
  `\ncapacity: a member with ${nodes} nodes and ${nodes * podsPerNode} pods, read a page of 500 at a time\n`,
);
for (const label of ["first reading", "second reading (steps kept)"]) {
  const started = process.hrtime.bigint();
  bytes = 0;
  const reading = await readCapacity(client);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  process.stdout.write(
    `  ${label.padEnd(30)} ${seconds.toFixed(2).padStart(7)} s   ${reading?.nodes} nodes ${reading?.pods} pods   ${(bytes / 2 ** 20).toFixed(0)} MiB read   ${reading?.capacity.pools.length} pools   heap +${((process.memoryUsage().heapUsed - heapBefore) / 2 ** 20).toFixed(0)} MiB\n`,
  );
}
process.stdout.write(
  `  ${"peak RSS".padEnd(30)} ${peakRssMiB().toFixed(0).padStart(7)} MiB (member and reader in one process)\n`,
);
await member.close();
