import { loadFleet } from "../../src/load/load-fleet.js";
import { type FileTree, fileTreeFromText } from "../../src/model/file-tree.js";
import type { FleetModel } from "../../src/model/types.js";

/**
 * A small valid fleet repo: two clusters, one app with a Deployment and a ConfigMap, one Placement.
 * Invalid-repo cases change or add files on top of it, so each case shows exactly one defect.
 */
export const MINIMAL_FLEET: Readonly<Record<string, string>> = {
  "clusters/east.yaml": `apiVersion: gitfleet.io/v1alpha1
kind: Cluster
metadata:
  name: east
  labels:
    env: prod
spec:
  provider: aws
  region: us-east
`,
  "clusters/west.yaml": `apiVersion: gitfleet.io/v1alpha1
kind: Cluster
metadata:
  name: west
  labels:
    env: prod
spec:
  provider: gcp
  region: eu-west
`,
  "apps/web/app.yaml": `apiVersion: gitfleet.io/v1alpha1
kind: App
metadata:
  name: web
spec:
  namespace: shop
`,
  "apps/web/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  replicas: 4
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
        - name: web
          image: ghcr.io/example/web:1.0.0
          resources:
            requests:
              cpu: 250m
              memory: 256Mi
`,
  "apps/web/config.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
data:
  MODE: production
`,
  "placements/web.yaml": `apiVersion: gitfleet.io/v1alpha1
kind: Placement
metadata:
  name: web
spec:
  apps: [web]
  replicaScheduling:
    type: Divided
`,
};

/** The minimal fleet's web Deployment with another replica count and CPU request. */
export function webDeployment(replicas: number, cpu = "250m"): string {
  return (MINIMAL_FLEET["apps/web/deployment.yaml"] ?? "")
    .replace("replicas: 4", `replicas: ${replicas}`)
    .replace("cpu: 250m", `cpu: ${cpu}`);
}

/** A file's new content: text, raw bytes (for encoding cases), or null to remove the file. */
export type FileChange = string | Uint8Array | null;

/** The minimal fleet with some files replaced, added, or (with null) removed. */
export function minimalFleetWith(changes: Readonly<Record<string, FileChange>>): FileTree {
  const tree = new Map(fileTreeFromText(MINIMAL_FLEET));
  for (const [path, content] of Object.entries(changes)) {
    if (content === null) tree.delete(path);
    else tree.set(path, typeof content === "string" ? new TextEncoder().encode(content) : content);
  }
  return tree;
}

/** The minimal fleet with web as a Divided Deployment of 4 replicas, plus `files`, loaded; throws on a problem. */
export function dividedWebFleet(files: Readonly<Record<string, string>>): FleetModel {
  const loaded = loadFleet(
    minimalFleetWith({
      "apps/web/deployment.yaml": webDeployment(4),
      "placements/web.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: web\nspec:\n  apps: [web]\n  replicaScheduling:\n    type: Divided\n",
      ...files,
    }),
  );
  if (!loaded.model)
    throw new Error(loaded.problems.map((p) => `${p.file}:${p.line} ${p.message}`).join("\n"));
  return loaded.model;
}

/** A FederatedHPA for web in shop: bounds, an optional mode and CPU target, more spec lines after. */
export function webFederatedHpa(options: {
  readonly min: number;
  readonly max: number;
  readonly mode?: "centralized" | "distributed";
  readonly cpu?: number;
  readonly more?: string;
}): string {
  return `apiVersion: gitfleet.io/v1alpha1
kind: FederatedHPA
metadata:
  name: web
  namespace: shop
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
${options.mode ? `  mode: ${options.mode}\n` : ""}  minReplicas: ${options.min}
  maxReplicas: ${options.max}
${options.cpu === undefined ? "" : `  metrics:\n    - type: Resource\n      resource: {name: cpu, target: {type: Utilization, averageUtilization: ${options.cpu}}}\n`}${options.more ?? ""}`;
}

/** The minimal fleet's web Placement, failing over at once when a cluster goes: its replicas move and go from it directly. */
export const DIRECT_FAILOVER_PLACEMENT = `${MINIMAL_FLEET["placements/web.yaml"] ?? ""}  failover:
    cluster:
      tolerationSeconds: 0
      purgeMode: Directly
`;
