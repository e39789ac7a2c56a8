import { fileURLToPath } from "node:url";
import { KubeConfig } from "@kubernetes/client-node";
import { MemberClient } from "../../../src/kube/member-client.js";
import { NodeSimulator } from "../cluster/node-simulator.js";

/** This file, run as a process: `node fake-kubelets.js KUBECONFIG CONTEXT...`. */
export const FAKE_KUBELETS = fileURLToPath(import.meta.url);

/**
 * Fake kubelets (test/e2e/cluster/node-simulator.ts) for each named context of a kubeconfig, in a
 * process of their own, so the CPU time of whoever applies is measured without theirs. Prints
 * "ready" once every cluster's nodes are schedulable; runs until killed.
 */
export async function runFakeKubelets(kubeconfig: string, contexts: readonly string[]): Promise<void> {
  await Promise.all(
    contexts.map((context) => {
      const config = new KubeConfig();
      config.loadFromFile(kubeconfig);
      config.setCurrentContext(context);
      return new NodeSimulator({
        cluster: context,
        client: new MemberClient(context, config, { retries: 2, timeoutMs: 30_000 }),
        nodes: 4,
        allocatable: { cpu: "64", memory: "256Gi", pods: "500" },
      }).start();
    }),
  );
  process.stdout.write("ready\n");
}

if (process.argv[1] === FAKE_KUBELETS) {
  const [kubeconfig, ...contexts] = process.argv.slice(2);
  if (!kubeconfig || contexts.length === 0) {
    process.stderr.write("usage: fake-kubelets KUBECONFIG CONTEXT...\n");
    process.exit(64);
  }
  await runFakeKubelets(kubeconfig, contexts);
}
