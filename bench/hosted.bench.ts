import "reflect-metadata";
import { planCredentials } from "../src/credentials/control-plane-pki.js";
import { loadFleet } from "../src/load/load-fleet.js";
import { resolveControlPlanes } from "../src/model/controlplane/hosted-control-plane.js";
import { renderFleet } from "../src/render/render-fleet.js";
import { hostedFleet } from "./hosted-fleet.js";
import { measure, printMeasurements } from "./measure.js";

/**
 * Benchmark: the controller's cost per hosted cluster when one meta cluster hosts many (Kube-on-Kube
 * at scale): N hosted clusters (BENCH_HOSTED, default 100 and 1000) of one class, each with a
 * dedicated etcd, a load-balanced API server and a node pool — load and validate, render (first and
 * steady), the objects and bytes rendered per hosted cluster, and the credentials pass (every CA,
 * certificate and kubeconfig a control plane needs, generated in-process) per control plane, timed
 * over the first BENCH_HOSTED_CREDENTIALS planes (default 50). Prints figures; asserts nothing.
 */
const sizes = (process.env.BENCH_HOSTED ?? "100,1000").split(",").map(Number);
const credentialSample = Number(process.env.BENCH_HOSTED_CREDENTIALS ?? 50);
for (const n of sizes) {
  const tree = hostedFleet(n, "LoadBalancer");
  const loaded = measure("load and validate", () => loadFleet(tree));
  const model = loaded.result.model;
  if (!model) throw new Error(`generated fleet is invalid: ${JSON.stringify(loaded.result.problems[0])}`);
  const first = measure("render (first)", () => renderFleet(model));
  const steady = measure("render on top of the first (steady)", () =>
    renderFleet(model, { previous: first.result }),
  );
  const objects = steady.result.objects;
  const host = objects.filter((o) => o.cluster === "meta-1");
  const hosted = objects.filter((o) => o.cluster !== "meta-1");
  const bytes = (list: typeof objects) => list.reduce((sum, o) => sum + o.text.length, 0);
  const planes = resolveControlPlanes(model, "meta-1")
    .slice(0, credentialSample)
    .map((p) => p.plane);
  const now = Date.now();
  const start = process.hrtime.bigint();
  let writes = 0;
  for (const plane of planes) writes += (await planCredentials(plane, new Map(), now)).writes.length;
  const credentialMs = Number(process.hrtime.bigint() - start) / 1e6;
  printMeasurements(`hosted clusters: ${n} on one host`, [
    loaded.measurement,
    first.measurement,
    steady.measurement,
  ]);
  const per = (value: number) => (value / n).toFixed(2);
  process.stdout.write(
    `  per hosted cluster: load ${per(loaded.measurement.milliseconds)} ms, render ${per(steady.measurement.milliseconds)} ms; ` +
      `${(host.length / n).toFixed(1)} objects (${(bytes(host) / n / 1024).toFixed(1)} KiB) in the host, ` +
      `${(hosted.length / n).toFixed(1)} objects (${(bytes(hosted) / n / 1024).toFixed(1)} KiB) in the cluster itself\n` +
      `  credentials from nothing: ${(credentialMs / planes.length).toFixed(1)} ms and ${(writes / planes.length).toFixed(0)} Secrets per control plane (over ${planes.length}); ` +
      `${(((credentialMs / planes.length) * n) / 1000).toFixed(1)} s for all ${n}\n`,
  );
}
