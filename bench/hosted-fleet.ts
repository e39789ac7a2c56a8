const encode = (text: string) => new TextEncoder().encode(text);

/** How the generated hosted clusters' API servers are exposed. */
export type HostedExpose = "LoadBalancer" | "NodePort";

/**
 * A fleet of one meta cluster (meta-1) hosting `n` clusters pc-0… of one class: a dedicated
 * three-member etcd and two API servers each. LoadBalancer: each at its own documentation address
 * (203.0.x.y), with a node pool of three. NodePort: each on 127.0.0.1 at node port 30000 + i, where
 * nothing listens, so a controller that reaches for a hosted cluster is refused at once — and without
 * a node pool, whose join tokens live in the hosted cluster itself.
 */
export function hostedFleet(n: number, expose: HostedExpose): Map<string, Uint8Array> {
  if (expose === "NodePort" && n > 2767)
    throw new Error(`${n} hosted clusters do not fit the node-port range`);
  const tree = new Map<string, Uint8Array>();
  tree.set(
    "fleet.yaml",
    encode("apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata:\n  name: hosted\nspec: {}\n"),
  );
  tree.set(
    "clusters/meta-1.yaml",
    encode("apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: meta-1\nspec: {}\n"),
  );
  tree.set(
    "controlplanes/standard.yaml",
    encode(`apiVersion: gitfleet.io/v1alpha1
kind: ControlPlaneClass
metadata:
  name: standard
spec:
  version: v1.36.1
  apiServer: { replicas: 2 }
  etcd: { version: 3.6.4-0, replicas: 3, storage: 8Gi }
`),
  );
  for (let i = 0; i < n; i++) {
    const octets = `${10 + Math.floor(i / 250)}.${i % 250}`;
    const exposed =
      expose === "LoadBalancer"
        ? `{ type: LoadBalancer, address: 203.0.${octets} }`
        : `{ type: NodePort, address: 127.0.0.1, port: ${30000 + i} }`;
    tree.set(
      `clusters/pc-${i}.yaml`,
      encode(`apiVersion: gitfleet.io/v1alpha1
kind: Cluster
metadata:
  name: pc-${i}
spec:
  controlPlane:
    host: meta-1
    class: standard
    expose: ${exposed}
${expose === "LoadBalancer" ? "    nodePools:\n      - { name: workers, replicas: 3 }\n" : ""}`),
    );
  }
  return tree;
}
