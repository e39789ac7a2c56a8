import * as k8s from "@kubernetes/client-node";
import { memberClientConfig } from "../src/sim/kubeconfig.js";
import { type SimulatedMember, startMember } from "../src/sim/member-server.js";
import { peakRssMiB } from "./measure.js";

/**
 * Benchmark: three simulated members, 10,000 server-side applies through @kubernetes/client-node
 * (ConfigMaps and Deployments, spread over the members, 16 in flight per member), then the same
 * objects applied again unchanged. Prints applies per second and memory; asserts nothing.
 */
const total = Number(process.env.BENCH_APPLIES ?? 10_000);
const members: SimulatedMember[] = [];
for (const name of ["east", "west", "north"]) members.push(await startMember({ name }));

function client(member: SimulatedMember): k8s.KubernetesObjectApi {
  return k8s.KubernetesObjectApi.makeApiClient(memberClientConfig(member));
}

function object(i: number): k8s.KubernetesObject & Record<string, unknown> {
  const name = `app-${i}`;
  if (i % 2 === 0)
    return {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name, namespace: "default", labels: { app: name } },
      data: { LEVEL: "info", INDEX: String(i) },
    };
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: "default", labels: { app: name } },
    spec: {
      replicas: (i % 5) + 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          containers: [
            { name: "main", image: `registry.example.com/${name}:1.0.0`, ports: [{ containerPort: 8080 }] },
          ],
        },
      },
    },
  };
}

async function applyAll(label: string): Promise<void> {
  const clients = members.map(client);
  const started = process.hrtime.bigint();
  await Promise.all(
    clients.map(async (api, m) => {
      const mine = Array.from({ length: total }, (_, i) => i).filter((i) => i % members.length === m);
      let next = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < mine.length) {
            const i = mine[next++] as number;
            await api.patch(
              object(i),
              undefined,
              undefined,
              "gitfleet",
              true,
              k8s.PatchStrategy.ServerSideApply,
            );
          }
        }),
      );
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  process.stdout.write(
    `  ${label.padEnd(44)} ${(total / seconds).toFixed(0).padStart(8)} applies/s   ${seconds.toFixed(1)} s   heap ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MiB\n`,
  );
}

process.stdout.write(
  `\nmembers: ${total} server-side applies over 3 simulated members through @kubernetes/client-node\n`,
);
await applyAll("first apply (creates)");
await applyAll("second apply (unchanged)");
process.stdout.write(
  `  ${"peak RSS".padEnd(44)} ${peakRssMiB().toFixed(0).padStart(8)} MiB (client and members in one process)\n`,
);
await Promise.all(members.map((member) => member.close()));
