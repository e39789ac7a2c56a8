import { type FileTree, fileTreeFromText } from "../src/model/file-tree.js";

/** Size of a generated fleet. */
export interface FleetSize {
  readonly apps: number;
  readonly clusters: number;
  /**
   * Place each app on this many named clusters instead of a shard of an eighth of the fleet; a range
   * [min, max] gives app a min + a mod (max - min + 1).
   */
  readonly clustersPerApp?: number | readonly [number, number];
  /** Seconds each Placement tolerates a NotReady cluster's NoExecute taint (failover.cluster.tolerationSeconds). */
  readonly failoverTolerationSeconds?: number;
}

const REGIONS = ["us-east", "us-west", "eu-west", "eu-central", "ap-south"];
const PROVIDERS = ["idc", "aws", "gcp", "azure"];

/**
 * Generates a realistic fleet repo in memory: clusters spread over regions and providers, and apps of
 * a Deployment, a Service and a ConfigMap, each placed by its own Placement (every tenth divided by
 * static weights), with one image Override per provider. Deterministic: the same size, the same bytes.
 */
export function generateFleet(size: FleetSize): FileTree {
  const files: Record<string, string> = {};
  for (let c = 0; c < size.clusters; c++) {
    const name = `cluster-${String(c).padStart(4, "0")}`;
    const region = REGIONS[c % REGIONS.length] ?? "us-east";
    const provider = PROVIDERS[c % PROVIDERS.length] ?? "idc";
    files[`clusters/${name}.yaml`] = `apiVersion: gitfleet.io/v1alpha1
kind: Cluster
metadata:
  name: ${name}
  labels:
    env: ${c % 10 === 0 ? "staging" : "prod"}
    shard: s${c % 8}
spec:
  provider: ${provider}
  region: ${region}
  zone: ${region}-${c % 3}
`;
  }
  for (let a = 0; a < size.apps; a++) Object.assign(files, generateApp(a, size));
  for (const provider of PROVIDERS) {
    files[`overrides/registry-${provider}.yaml`] = `apiVersion: gitfleet.io/v1alpha1
kind: Override
metadata:
  name: registry-${provider}
spec:
  resourceSelectors:
    - apiVersion: apps/v1
      kind: Deployment
      labelSelector:
        matchLabels:
          tier: web
  overrideRules:
    - targetCluster:
        fieldSelector:
          matchExpressions:
            - key: provider
              operator: In
              values: [${provider}]
      overriders:
        imageOverrider:
          - component: Registry
            operator: replace
            value: registry.${provider}.example.com
`;
  }
  return fileTreeFromText(files);
}

function generateApp(a: number, size: FleetSize): Record<string, string> {
  const clusters = size.clusters;
  const name = `app-${String(a).padStart(5, "0")}`;
  const namespace = `team-${a % 50}`;
  const divided = a % 10 === 0;
  const first = `cluster-${String(a % clusters).padStart(4, "0")}`;
  const scheduling = divided
    ? `  replicaScheduling:
    type: Divided
    weightPreference:
      staticWeightList:
        - targetCluster:
            labelSelector:
              matchLabels:
                env: prod
          weight: 2
        - targetCluster:
            clusterNames: [${first}]
          weight: 1
`
    : "  replicaScheduling:\n    type: Duplicated\n";
  return {
    [`apps/${name}/app.yaml`]: `apiVersion: gitfleet.io/v1alpha1
kind: App
metadata:
  name: ${name}
spec:
  namespace: ${namespace}
  owner: team-${a % 50}
`,
    [`apps/${name}/deployment.yaml`]: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  labels:
    app: ${name}
    tier: web
spec:
  replicas: ${(a % 12) + 1}
  selector:
    matchLabels:
      app: ${name}
  template:
    metadata:
      labels:
        app: ${name}
    spec:
      containers:
        - name: main
          image: ghcr.io/example/${name}:1.${a % 20}.0
          envFrom:
            - configMapRef:
                name: ${name}
          resources:
            requests:
              cpu: ${100 + (a % 8) * 50}m
              memory: ${128 * ((a % 4) + 1)}Mi
            limits:
              memory: ${256 * ((a % 4) + 1)}Mi
`,
    [`apps/${name}/service.yaml`]: `apiVersion: v1
kind: Service
metadata:
  name: ${name}
spec:
  selector:
    app: ${name}
  ports:
    - port: 80
      targetPort: 8080
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
data:
  LOG_LEVEL: info
`,
    [`placements/${name}.yaml`]: `apiVersion: gitfleet.io/v1alpha1
kind: Placement
metadata:
  name: ${name}
spec:
  apps: [${name}]
${affinity(a, size)}${scheduling}${failover(size)}`,
  };
}

function failover(size: FleetSize): string {
  const seconds = size.failoverTolerationSeconds;
  return seconds === undefined ? "" : `  failover:\n    cluster:\n      tolerationSeconds: ${seconds}\n`;
}

function affinity(a: number, size: FleetSize): string {
  if (size.clustersPerApp === undefined)
    return `  clusterAffinity:\n    labelSelector:\n      matchLabels:\n        shard: s${a % 8}\n`;
  const [min, max] =
    typeof size.clustersPerApp === "number"
      ? [size.clustersPerApp, size.clustersPerApp]
      : size.clustersPerApp;
  const names = Array.from(
    { length: min + (a % (max - min + 1)) },
    (_, i) => `cluster-${String((a * 7 + i * 13) % size.clusters).padStart(4, "0")}`,
  );
  return `  clusterAffinity:\n    clusterNames: [${[...new Set(names)].join(", ")}]\n`;
}
