import { type FileTree, fileTreeFromText } from "../../../src/model/file-tree.js";

/** The size of the comparison's object set. */
export interface PeerFleetSize {
  /** Namespaces, each with the same ten objects (default 500: 5,002 objects with the two CRDs). */
  readonly namespaces: number;
}

/** The Cluster gitfleet syncs in the comparison (a context of that name in the kubeconfig). */
export const GITFLEET_CLUSTER = "peer-gitfleet";

/** How many ConfigMaps a change of `percent` of the objects edits, and which. */
export function changedConfigMaps(size: PeerFleetSize, percent: number): string[] {
  const total = size.namespaces * 10 + 2;
  const count = Math.max(1, Math.round((total * percent) / 100));
  return Array.from({ length: count }, (_, i) => {
    const n = i % size.namespaces;
    return `apps/${namespaceName(n)}/configmaps.yaml#${Math.floor(i / size.namespaces) % 4}`;
  });
}

/**
 * A fleet repo of one cluster and one app per namespace: the Namespace, two Deployments of one
 * replica, two Services, four ConfigMaps and one custom resource (of two CRDs, in an app of their own)
 * — the mix a platform repo holds. `changed` names ConfigMaps (as changedConfigMaps gives them) whose
 * data is edited: the 1% change. Deterministic: the same size, the same bytes.
 */
export function peerFleet(size: PeerFleetSize, changed: readonly string[] = []): FileTree {
  const edits = new Set(changed);
  const files: Record<string, string> = {
    [`clusters/${GITFLEET_CLUSTER}.yaml`]: `apiVersion: gitfleet.io/v1alpha1
kind: Cluster
metadata:
  name: ${GITFLEET_CLUSTER}
spec:
  provider: idc
  region: local
  connection:
    mode: push
`,
    "apps/crds/app.yaml": app("crds"),
    "apps/crds/crds.yaml": [crd("Widget", "widgets"), crd("Gadget", "gadgets")].join("---\n"),
    "placements/crds.yaml": placement("crds"),
  };
  for (let n = 0; n < size.namespaces; n++) {
    const ns = namespaceName(n);
    files[`apps/${ns}/app.yaml`] = app(ns, ns);
    files[`apps/${ns}/namespace.yaml`] =
      `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n  labels:\n    team: t${n % 20}\n`;
    files[`apps/${ns}/deployments.yaml`] = [0, 1].map((d) => deployment(`api-${d}`, n)).join("---\n");
    files[`apps/${ns}/services.yaml`] = [0, 1].map((d) => service(`api-${d}`)).join("---\n");
    files[`apps/${ns}/configmaps.yaml`] = [0, 1, 2, 3]
      .map((c) => configMap(`settings-${c}`, n, edits.has(`apps/${ns}/configmaps.yaml#${c}`)))
      .join("---\n");
    files[`apps/${ns}/custom.yaml`] = custom(n);
    files[`placements/${ns}.yaml`] = placement(ns);
  }
  return fileTreeFromText(files);
}

export function namespaceName(n: number): string {
  return `peer-${String(n).padStart(4, "0")}`;
}

function app(name: string, namespace?: string): string {
  return `apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: ${name}\nspec:\n${namespace ? `  namespace: ${namespace}\n` : ""}  owner: platform\n`;
}

function placement(app: string): string {
  return `apiVersion: gitfleet.io/v1alpha1
kind: Placement
metadata:
  name: ${app}
spec:
  apps: [${app}]
  clusterAffinity:
    clusterNames: [${GITFLEET_CLUSTER}]
  replicaScheduling:
    type: Duplicated
`;
}

function crd(kind: string, plural: string): string {
  return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${plural}.bench.gitfleet.io
spec:
  group: bench.gitfleet.io
  scope: Namespaced
  names:
    kind: ${kind}
    listKind: ${kind}List
    plural: ${plural}
    singular: ${kind.toLowerCase()}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                size:
                  type: integer
                colour:
                  type: string
`;
}

function deployment(name: string, n: number): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  labels:
    app: ${name}
spec:
  replicas: 1
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
          image: registry.example.com/peer/${name}:1.${n % 10}.0
          ports:
            - name: http
              containerPort: 8080
          envFrom:
            - configMapRef:
                name: settings-0
          resources:
            requests:
              cpu: 10m
              memory: 16Mi
`;
}

function service(name: string): string {
  return `apiVersion: v1
kind: Service
metadata:
  name: ${name}
spec:
  selector:
    app: ${name}
  ports:
    - name: http
      port: 80
      targetPort: http
`;
}

function configMap(name: string, n: number, edited: boolean): string {
  return `apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
data:
  LOG_LEVEL: ${edited ? "debug" : "info"}
  SHARD: "${n % 16}"
  FEATURES: "search,checkout,reviews"
`;
}

function custom(n: number): string {
  const [kind] = n % 2 === 0 ? ["Widget"] : ["Gadget"];
  return `apiVersion: bench.gitfleet.io/v1
kind: ${kind}
metadata:
  name: unit-${n}
spec:
  size: ${n % 7}
  colour: ${["red", "green", "blue"][n % 3]}
`;
}
