import { parentPort, workerData } from "node:worker_threads";
import { KubeConfig } from "@kubernetes/client-node";
import { LeaderElector } from "../../kube/leader-election.js";
import { MemberClient } from "../../kube/member-client.js";
import { createLogger } from "../../log/logger.js";
import type { LeaseWorkerInput, LeaseWorkerMessage } from "./leader-lease.js";

// The election in a thread of its own: renewals go out every retry period however long the
// controller's thread is busy rendering a large fleet, and the time of each renewal sent is stored
// where the controller's fence reads it (a shared buffer), so the fence never waits on this thread.
const input = workerData as LeaseWorkerInput;
const renewedAt = new BigInt64Array(input.renewedAt);
const willing = input.willing ? new Int32Array(input.willing) : undefined;
const post = (message: LeaseWorkerMessage) => parentPort?.postMessage(message);

const config = new KubeConfig();
if (input.kubeconfig === undefined) config.loadFromCluster();
else config.loadFromString(input.kubeconfig);
const client = new MemberClient("management", config, {
  // Every request bounded so a hung API server cannot hold a renewal past its deadline.
  timeoutMs: Math.max(1000, Math.floor(input.timings.renewDeadlineMs / 2)),
  retries: 0,
});
const elector = new LeaderElector({
  ...input.timings,
  api: client,
  namespace: input.namespace,
  name: input.name,
  identity: input.identity,
  logger: createLogger({ level: input.logLevel }),
  onRenewed: (sentAtMs) => Atomics.store(renewedAt, 0, BigInt(sentAtMs)),
  onRelayed: (reason) => post({ type: "relayed", reason }),
  ...(willing ? { mayAcquire: () => Atomics.load(willing, 0) === 1 } : {}),
  onObserved: (holder) => post({ type: "observed", holder }),
});

parentPort?.on("message", (message: { readonly release?: boolean; readonly relay?: string }) => {
  if (message.relay !== undefined) {
    void elector
      .relay(message.relay)
      .catch((error: unknown) => post({ type: "relay-failed", error: String(error) }));
    return;
  }
  if (!message.release) return;
  elector.stop();
  Atomics.store(renewedAt, 0, -1n);
  void elector.release().finally(() => post({ type: "released" }));
});

await elector.run({
  started: () => post({ type: "started" }),
  stopped: () => {
    Atomics.store(renewedAt, 0, -1n);
    const holder = elector.holder;
    post({ type: "stopped", holder: holder && holder !== input.identity ? holder : "" });
  },
});
