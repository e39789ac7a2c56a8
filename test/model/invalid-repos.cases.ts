/**
 * Invalid fleet repos, each a one-defect change to the minimal fleet, with the exact problem lines
 * (file:line:column, severity, JSON path, message, code) that validation must print for it.
 */
import type { FileChange } from "../helpers/minimal-fleet.js";

export interface InvalidRepoCase {
  readonly name: string;
  readonly files: Readonly<Record<string, FileChange>>;
  readonly expected: readonly string[];
}

const DEPLOYMENT = (spec: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
${spec}`;

const PLACEMENT = (name: string, spec: string) => `apiVersion: gitfleet.io/v1alpha1
kind: Placement
metadata:
  name: ${name}
spec:
${spec}`;

export const INVALID_REPO_CASES: readonly InvalidRepoCase[] = [
  {
    name: "enum typo in replicaScheduling.type",
    files: {
      "placements/web.yaml": PLACEMENT("web", "  apps: [web]\n  replicaScheduling:\n    type: Divid\n"),
    },
    expected: [
      'placements/web.yaml:8:11: error: /spec/replicaScheduling/type: must be one of Duplicated, Divided (got "Divid") [SCHEMA_VIOLATION]',
    ],
  },
  {
    name: "unknown field with a suggestion",
    files: {
      "placements/web.yaml": PLACEMENT("web", "  apps: [web]\n  replicaSchedule:\n    type: Divided\n"),
    },
    expected: [
      'placements/web.yaml:7:3: error: /spec/replicaSchedule: unknown field "replicaSchedule" (did you mean "replicaScheduling"?) [SCHEMA_VIOLATION]',
    ],
  },
  {
    name: "missing required field spec in a Cluster",
    files: {
      "clusters/west.yaml": "apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: west\n",
    },
    expected: ['clusters/west.yaml:1:1: error: /spec: missing required field "spec" [MISSING_FIELD]'],
  },
  {
    name: "wrong apiVersion on a gitfleet kind",
    files: {
      "clusters/west.yaml":
        "apiVersion: gitfleet.io/v1\nkind: Cluster\nmetadata:\n  name: west\nspec:\n  region: eu-west\n",
    },
    expected: [
      'clusters/west.yaml:1:13: error: /apiVersion: must be "gitfleet.io/v1alpha1" (got "gitfleet.io/v1") [SCHEMA_VIOLATION]',
    ],
  },
  {
    name: "a Placement in clusters/",
    files: { "clusters/extra.yaml": PLACEMENT("extra", "  apps: [web]\n") },
    expected: [
      'clusters/extra.yaml:2:7: error: /kind: clusters/ holds Cluster objects (got kind "Placement"); move this document to placements/ [WRONG_KIND]',
    ],
  },
  {
    name: "YAML syntax error (bad indentation)",
    files: {
      "placements/web.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: web\n spec: {}\n",
    },
    expected: [
      "placements/web.yaml:5:1: error: YAML: All mapping items must start at the same column [YAML_SYNTAX]",
    ],
  },
  {
    name: "duplicate key in a mapping",
    files: { "placements/web.yaml": PLACEMENT("web", "  apps: [web]\n  apps: [web]\n") },
    expected: ["placements/web.yaml:7:3: error: YAML: Map keys must be unique [YAML_SYNTAX]"],
  },
  {
    name: "file that is not UTF-8",
    files: {
      "clusters/east.yaml": Uint8Array.from([
        ...new TextEncoder().encode("apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: e"),
        0xff,
        ...new TextEncoder().encode("ast\nspec: {}\n"),
      ]),
    },
    expected: [
      "clusters/east.yaml:4:10: error: file is not valid UTF-8 (byte 0xff); save it as UTF-8 text [NOT_UTF8]",
    ],
  },
  {
    name: "document that is a list, not a mapping",
    files: { "overrides/list.yaml": "- a\n- b\n" },
    expected: [
      "overrides/list.yaml:1:1: error: expected an Override object (a mapping), got a list [NOT_AN_OBJECT]",
    ],
  },
  {
    name: "cluster name that is not a DNS-1123 label",
    files: {
      "clusters/East_1.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: East_1\nspec: {}\n",
    },
    expected: [
      "clusters/East_1.yaml:4:9: error: /metadata/name: \"East_1\" must consist of lowercase letters, digits and '-', and start and end with a letter or digit [SCHEMA_VIOLATION]",
    ],
  },
  {
    name: "cluster file named differently from the cluster",
    files: {
      "clusters/west.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: west-2\nspec: {}\n",
    },
    expected: [
      'clusters/west.yaml:4:9: error: /metadata/name: cluster "west-2" must be defined in clusters/west-2.yaml; rename the file or the cluster [NAME_MISMATCH]',
    ],
  },
  {
    name: "unknown cluster in clusterAffinity.clusterNames",
    files: {
      "placements/web.yaml": PLACEMENT(
        "web",
        "  apps: [web]\n  clusterAffinity:\n    clusterNames: [east, wset]\n",
      ),
    },
    expected: [
      'placements/web.yaml:8:26: error: /spec/clusterAffinity/clusterNames/1: unknown cluster "wset" (did you mean "west"?); clusters are defined under clusters/ [UNKNOWN_REFERENCE]',
    ],
  },
  {
    name: "unknown cluster in an Override rule's targetCluster.exclude",
    files: {
      "overrides/labels.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Override\nmetadata:\n  name: labels\nspec:\n  apps: [web]\n  overrideRules:\n    - targetCluster:\n        exclude: [north]\n      overriders:\n        labelsOverrider:\n          - operator: add\n            value: {tier: front}\n",
    },
    expected: [
      'overrides/labels.yaml:9:19: error: /spec/overrideRules/0/targetCluster/exclude/0: unknown cluster "north"; clusters are defined under clusters/ [UNKNOWN_REFERENCE]',
    ],
  },
  {
    name: "unknown app in a Placement",
    files: { "placements/web.yaml": PLACEMENT("web", "  apps: [web, shop]\n") },
    expected: [
      'placements/web.yaml:6:15: error: /spec/apps/1: unknown app "shop"; apps are defined under apps/ [UNKNOWN_REFERENCE]',
    ],
  },
  {
    name: "two resources with the same identity",
    files: {
      "apps/web/config-2.yaml":
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\n  namespace: shop\n",
    },
    expected: [
      "apps/web/config.yaml:4:9: error: /metadata/name: ConfigMap shop/web-config is already defined at apps/web/config-2.yaml:4; each object may be defined once [DUPLICATE_RESOURCE]",
    ],
  },
  {
    name: "same resource defined by two apps",
    files: {
      "apps/api/config.yaml":
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\n  namespace: shop\n",
      "placements/api.yaml": PLACEMENT("api", "  apps: [api]\n  priority: 1\n"),
    },
    expected: [
      "apps/web/config.yaml:4:9: error: /metadata/name: ConfigMap shop/web-config is already defined at apps/api/config.yaml:4 (app api); each object may be defined once [DUPLICATE_RESOURCE]",
    ],
  },
  {
    name: "a workload selected by two Placements of equal priority",
    files: {
      "placements/web-eu.yaml": PLACEMENT(
        "web-eu",
        "  resourceSelectors:\n    - apiVersion: apps/v1\n      kind: Deployment\n      name: web\n",
      ),
    },
    expected: [
      'placements/web-eu.yaml:4:9: error: /metadata/name: Deployment shop/web selected by placements "web" (placements/web.yaml:4) and "web-eu" (placements/web-eu.yaml:4) with equal priority 0; give one a higher spec.priority [PRIORITY_TIE]',
    ],
  },
  {
    name: "label selector with In and no values",
    files: {
      "placements/web.yaml": PLACEMENT(
        "web",
        "  apps: [web]\n  clusterAffinity:\n    labelSelector:\n      matchExpressions:\n        - key: env\n          operator: In\n",
      ),
    },
    expected: [
      'placements/web.yaml:11:21: error: /spec/clusterAffinity/labelSelector/matchExpressions/0/operator: operator In needs at least one value in "values" [INVALID_SELECTOR]',
    ],
  },
  {
    name: "label selector with Exists and values",
    files: {
      "placements/web.yaml": PLACEMENT(
        "web",
        "  apps: [web]\n  clusterAffinity:\n    labelSelector:\n      matchExpressions:\n        - key: env\n          operator: Exists\n          values: [prod]\n",
      ),
    },
    expected: [
      'placements/web.yaml:12:11: error: /spec/clusterAffinity/labelSelector/matchExpressions/0/values: operator Exists takes no values; remove "values" [INVALID_SELECTOR]',
    ],
  },
  {
    name: "label selector with an invalid key",
    files: {
      "placements/web.yaml": PLACEMENT(
        "web",
        "  apps: [web]\n  clusterAffinity:\n    labelSelector:\n      matchLabels:\n        -env: prod\n",
      ),
    },
    expected: [
      "placements/web.yaml:10:9: error: /spec/clusterAffinity/labelSelector/matchLabels/-env: label key \"-env\": name part must be 1-63 characters of letters, digits, '-', '_' and '.', starting and ending with a letter or digit [INVALID_LABEL]",
    ],
  },
  {
    name: "invalid resource quantity in a container request",
    files: {
      "apps/web/deployment.yaml": DEPLOYMENT(
        "  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n        - name: web\n          image: web:1\n          resources:\n            requests:\n              memory: 1GB\n",
      ),
    },
    expected: [
      'apps/web/deployment.yaml:17:23: error: /spec/template/spec/containers/0/resources/requests/memory: memory: "1GB" is not a resource quantity; write it like 500m, 2, 1Gi or 512Mi [INVALID_QUANTITY]',
    ],
  },
  {
    name: "request above its limit",
    files: {
      "apps/web/deployment.yaml": DEPLOYMENT(
        '  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n        - name: web\n          image: web:1\n          resources:\n            requests:\n              cpu: "2"\n            limits:\n              cpu: 1500m\n',
      ),
    },
    expected: [
      "apps/web/deployment.yaml:17:20: error: /spec/template/spec/containers/0/resources/requests/cpu: cpu request 2 exceeds its limit 1500m; Kubernetes rejects this [INVALID_QUANTITY]",
    ],
  },
  {
    name: "Deployment selector that does not match its template",
    files: {
      "apps/web/deployment.yaml": DEPLOYMENT(
        "  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: www}\n    spec:\n      containers:\n        - name: web\n          image: web:1\n",
      ),
    },
    expected: [
      "apps/web/deployment.yaml:7:5: error: /spec/selector: spec.selector does not match spec.template.metadata.labels; Kubernetes rejects this [INVALID_SELECTOR]",
    ],
  },
  {
    name: "manifest without metadata.name",
    files: { "apps/web/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels: {a: b}\n" },
    expected: [
      'apps/web/config.yaml:3:1: error: /metadata/name: missing required field "name" [MISSING_FIELD]',
    ],
  },
  {
    name: "manifest without kind",
    files: { "apps/web/config.yaml": "apiVersion: v1\nmetadata:\n  name: web-config\n" },
    expected: ['apps/web/config.yaml:1:1: error: /kind: missing required field "kind" [MISSING_FIELD]'],
  },
  {
    name: "label value that is a number",
    files: {
      "apps/web/config.yaml":
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\n  labels:\n    version: 1.0\n",
    },
    expected: [
      "apps/web/config.yaml:6:14: error: /metadata/labels/version: label values must be strings (got 1); quote the value [INVALID_LABEL]",
    ],
  },
  {
    name: "Secret data that is not base64",
    files: {
      "apps/web/secret.yaml":
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: web-token\ndata:\n  token: not base64!\n",
    },
    expected: [
      "apps/web/secret.yaml:6:10: error: /data/token: data.token must be base64-encoded text; put plain text under stringData [INVALID_SECRET_DATA]",
    ],
  },
  {
    name: "namespace on a cluster-scoped kind (warning)",
    files: {
      "apps/web/role.yaml":
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: web-reader\n  namespace: shop\nrules: []\n",
    },
    expected: [
      "apps/web/role.yaml:5:14: warning: /metadata/namespace: ClusterRole is cluster-scoped; metadata.namespace is ignored, remove it [SCOPE_MISMATCH]",
    ],
  },
  {
    name: "Override that selects nothing (warning)",
    files: {
      "overrides/api.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Override\nmetadata:\n  name: api\nspec:\n  resourceSelectors:\n    - apiVersion: apps/v1\n      kind: Deployment\n      name: api\n  overrideRules:\n    - overriders:\n        labelsOverrider:\n          - operator: add\n            value: {a: b}\n",
    },
    expected: [
      'overrides/api.yaml:4:9: warning: /metadata/name: Override "api" selects no resource in apps/; check spec.apps and spec.resourceSelectors [SELECTS_NOTHING]',
    ],
  },
  {
    name: "Placement resource selector that matches nothing (warning)",
    files: {
      "placements/web.yaml": PLACEMENT(
        "web",
        "  apps: [web]\n  resourceSelectors:\n    - apiVersion: apps/v1\n      kind: StatefulSet\n      name: web\n",
      ),
    },
    expected: [
      "placements/web.yaml:8:7: warning: /spec/resourceSelectors/0: this selector matches no resource (StatefulSet web, apiVersion apps/v1); check its apiVersion, kind, namespace and name [SELECTS_NOTHING]",
    ],
  },
  {
    name: "app no Placement selects (warning)",
    files: { "placements/web.yaml": null },
    expected: [
      'apps/web/config.yaml:1:1: warning: app "web" is selected by no Placement, so it runs nowhere; add it to a placement\'s spec.apps [NOT_PLACED]',
    ],
  },
  {
    name: "Migration naming an unknown app",
    files: {
      "migrations/move.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Migration\nmetadata:\n  name: move\nspec:\n  batches:\n    - name: first\n      apps: [web, billing]\n",
    },
    expected: [
      'migrations/move.yaml:8:19: error: /spec/batches/0/apps/1: unknown app "billing"; apps are defined under apps/ [UNKNOWN_REFERENCE]',
    ],
  },
  {
    name: "Migration with a duration in words",
    files: {
      "migrations/move.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Migration\nmetadata:\n  name: move\nspec:\n  observe: 10 minutes\n  batches:\n    - name: first\n      apps: [web]\n",
    },
    expected: [
      'migrations/move.yaml:6:12: error: /spec/observe: "10 minutes" is not a duration; write it like 30s, 10m or 1h30m [SCHEMA_VIOLATION]',
    ],
  },
  {
    name: "Migration batch on an unknown cluster",
    files: {
      "migrations/move.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Migration\nmetadata:\n  name: move\nspec:\n  batches:\n    - name: first\n      apps: [web]\n      clusters: [test, east]\n",
    },
    expected: [
      'migrations/move.yaml:9:18: error: /spec/batches/0/clusters/0: unknown cluster "test" (did you mean "west"?); clusters are defined under clusters/ [UNKNOWN_REFERENCE]',
    ],
  },
  {
    name: "the same app twice on the same cluster in one Migration",
    files: {
      "migrations/move.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Migration\nmetadata:\n  name: move\nspec:\n  batches:\n    - name: first\n      apps: [web]\n      clusters: [east]\n    - name: second\n      apps: [web]\n      clusters: [east, west]\n",
    },
    expected: [
      'migrations/move.yaml:11:14: error: /spec/batches/1/apps/0: app "web" already migrates in batch "first" on some of the same clusters; give the batches disjoint clusters [INVALID_FIELD_COMBINATION]',
    ],
  },
  {
    name: "spread constraint with both spreadByField and spreadByLabel, min above max",
    files: {
      "placements/web.yaml": PLACEMENT(
        "web",
        "  apps: [web]\n  spreadConstraints:\n    - spreadByField: region\n      spreadByLabel: zone\n      minGroups: 3\n      maxGroups: 2\n",
      ),
    },
    expected: [
      "placements/web.yaml:8:7: error: /spec/spreadConstraints/0: set exactly one of spreadByField and spreadByLabel [INVALID_FIELD_COMBINATION]",
      "placements/web.yaml:10:18: error: /spec/spreadConstraints/0/minGroups: minGroups (3) must not exceed maxGroups (2) [INVALID_FIELD_COMBINATION]",
    ],
  },
  {
    name: "overflow tiers with clusterAffinity, on a Duplicated placement, a tier named twice, an unknown cluster",
    files: {
      "placements/web.yaml": PLACEMENT(
        "web",
        "  apps: [web]\n  clusterAffinity:\n    clusterNames: [east]\n  overflow:\n    tiers:\n      - name: onprem\n        clusterAffinity:\n          clusterNames: [east]\n      - name: onprem\n        clusterAffinity:\n          clusterNames: [north]\n",
      ),
    },
    expected: [
      "placements/web.yaml:10:5: error: /spec/overflow: overflow tiers divide a total: they need replicaScheduling type Divided [INVALID_FIELD_COMBINATION]",
      "placements/web.yaml:10:5: error: /spec/overflow: set clusterAffinity or overflow, not both: each tier names its clusters [INVALID_FIELD_COMBINATION]",
      'placements/web.yaml:14:15: error: /spec/overflow/tiers/1/name: tier name "onprem" is used twice [INVALID_FIELD_COMBINATION]',
      'placements/web.yaml:16:26: error: /spec/overflow/tiers/1/clusterAffinity/clusterNames/0: unknown cluster "north"; clusters are defined under clusters/ [UNKNOWN_REFERENCE]',
    ],
  },
  {
    name: "weightPreference on a Duplicated placement",
    files: {
      "placements/web.yaml": PLACEMENT(
        "web",
        "  apps: [web]\n  replicaScheduling:\n    type: Duplicated\n    weightPreference:\n      dynamicWeight: AvailableReplicas\n",
      ),
    },
    expected: [
      "placements/web.yaml:10:7: error: /spec/replicaScheduling/weightPreference: weightPreference applies only to type Divided [INVALID_FIELD_COMBINATION]",
    ],
  },
  {
    name: "static weight of zero",
    files: {
      "placements/web.yaml": PLACEMENT(
        "web",
        "  apps: [web]\n  replicaScheduling:\n    weightPreference:\n      staticWeightList:\n        - targetCluster: {clusterNames: [east]}\n          weight: 0\n",
      ),
    },
    expected: [
      "placements/web.yaml:11:19: error: /spec/replicaScheduling/weightPreference/staticWeightList/0/weight: must be at least 1 (got 0) [SCHEMA_VIOLATION]",
    ],
  },
  {
    name: "unknown scheduler profile",
    files: { "placements/web.yaml": PLACEMENT("web", "  apps: [web]\n  schedulerProfile: statefull\n") },
    expected: [
      'placements/web.yaml:7:21: error: /spec/schedulerProfile: scheduler profile "statefull" is not defined in fleet.yaml spec.schedulerProfiles [UNKNOWN_REFERENCE]',
    ],
  },
  {
    name: "FederatedHPA metrics: a Pods metric with a Value target, an External metric without its block, an Object target without its value",
    files: {
      "autoscaling/web.yaml":
        'apiVersion: gitfleet.io/v1alpha1\nkind: FederatedHPA\nmetadata:\n  name: web\nspec:\n  scaleTargetRef:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: web\n  maxReplicas: 5\n  metrics:\n    - type: Pods\n      pods:\n        metric: {name: rps}\n        target: {type: Value, value: "10"}\n    - type: External\n      resource:\n        name: cpu\n        target: {type: Utilization, averageUtilization: 50}\n    - type: Object\n      object:\n        describedObject: {apiVersion: networking.k8s.io/v1, kind: Ingress, name: main}\n        metric: {name: rps}\n        target: {type: Value, averageValue: "10"}\n',
    },
    expected: [
      "autoscaling/web.yaml:15:24: error: /spec/metrics/0/pods/target/type: a Pods metric's target is AverageValue, not Value [INVALID_FIELD_COMBINATION]",
      "autoscaling/web.yaml:16:7: error: /spec/metrics/1: an External metric needs external [INVALID_FIELD_COMBINATION]",
      "autoscaling/web.yaml:24:17: error: /spec/metrics/2/object/target: target type Value needs value [INVALID_FIELD_COMBINATION]",
    ],
  },
  {
    name: "FederatedHPA targeting a Deployment that does not exist, min above max",
    files: {
      "autoscaling/web.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: FederatedHPA\nmetadata:\n  name: web\nspec:\n  scaleTargetRef:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: wbe\n  minReplicas: 10\n  maxReplicas: 5\n",
    },
    expected: [
      'autoscaling/web.yaml:9:11: error: /spec/scaleTargetRef/name: no Deployment "wbe" (apiVersion apps/v1) in apps/ [UNKNOWN_REFERENCE]',
      "autoscaling/web.yaml:10:16: error: /spec/minReplicas: minReplicas (10) must not exceed maxReplicas (5) [INVALID_FIELD_COMBINATION]",
    ],
  },
  {
    name: "ScaleDownRequest on a Deployment (no pods-to-delete field) in a cluster that does not exist",
    files: {
      "autoscaling/drain.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: ScaleDownRequest\nmetadata:\n  name: drain\nspec:\n  scaleTargetRef:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: web\n  cluster: north\n  pods: [web-1, web-2]\n",
    },
    expected: [
      "autoscaling/drain.yaml:8:11: error: /spec/scaleTargetRef/kind: Deployment has no pods-to-delete field: targeted scale-down needs a ResourceInterpreter for apps/v1 Deployment with podsToDeletePath (an OpenKruise CloneSet's is spec.scaleStrategy.podsToDelete) [INVALID_FIELD_COMBINATION]",
      'autoscaling/drain.yaml:10:12: error: /spec/cluster: no Cluster "north" under clusters/ [UNKNOWN_REFERENCE]',
    ],
  },
  {
    name: "ScaleDownRequest naming a pod twice",
    files: {
      "autoscaling/drain.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: ScaleDownRequest\nmetadata:\n  name: drain\nspec:\n  scaleTargetRef:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: web\n  cluster: east\n  pods: [web-1, web-1]\n",
    },
    expected: [
      'autoscaling/drain.yaml:11:9: error: /spec/pods: lists "web-1" twice (items 0 and 1) [SCHEMA_VIOLATION]',
    ],
  },
  {
    name: "CronScale with an invalid cron schedule",
    files: {
      "autoscaling/peak.yaml":
        'apiVersion: gitfleet.io/v1alpha1\nkind: CronScale\nmetadata:\n  name: peak\nspec:\n  scaleTargetRef:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: web\n  rules:\n    - name: morning\n      schedule: "0 25 * * *"\n      targetReplicas: 10\n',
    },
    expected: [
      'autoscaling/peak.yaml:12:17: error: /spec/rules/0/schedule: "0 25 * * *" is not a cron schedule: hour: "25" is not in 0-23 [SCHEMA_VIOLATION]',
    ],
  },
  {
    name: "taint effect typo and wrong type for unschedulable",
    files: {
      "clusters/west.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: west\nspec:\n  unschedulable: maybe\n  taints:\n    - key: gpu\n      effect: NoExecution\n",
    },
    expected: [
      'clusters/west.yaml:6:18: error: /spec/unschedulable: must be true or false (got "maybe") [SCHEMA_VIOLATION]',
      'clusters/west.yaml:9:15: error: /spec/taints/0/effect: must be one of NoSchedule, NoExecute (got "NoExecution") [SCHEMA_VIOLATION]',
    ],
  },
  {
    name: "inline credentials in a Cluster connection are refused",
    files: {
      "clusters/west.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: west\nspec:\n  connection:\n    mode: push\n    token: fake-token-for-test\n",
    },
    expected: [
      'clusters/west.yaml:8:5: error: /spec/connection/token: unknown field "token" [SCHEMA_VIOLATION]',
    ],
  },
  {
    name: "App definition named differently from its directory",
    files: {
      "apps/web/app.yaml": "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: website\n",
    },
    expected: [
      'apps/web/app.yaml:4:9: error: /metadata/name: the App in apps/web/ must be named "web" (got "website") [NAME_MISMATCH]',
    ],
  },
  {
    name: "two ResourceInterpreters for one kind",
    files: {
      "interpreters/a.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: ResourceInterpreter\nmetadata:\n  name: a\nspec:\n  target:\n    apiVersion: apps.kruise.io/v1alpha1\n    kind: CloneSet\n  replicasPath: spec.replicas\n",
      "interpreters/b.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: ResourceInterpreter\nmetadata:\n  name: b\nspec:\n  target:\n    apiVersion: apps.kruise.io/v1beta1\n    kind: CloneSet\n  replicasPath: spec.replicas\n",
    },
    expected: [
      'interpreters/b.yaml:7:5: error: /spec/target: CloneSet (group apps.kruise.io) already has the interpreter "a" at interpreters/a.yaml:1; keep one [DUPLICATE_NAME]',
    ],
  },
  {
    name: "ResourceInterpreter path that is not a dotted field path",
    files: {
      "interpreters/a.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: ResourceInterpreter\nmetadata:\n  name: a\nspec:\n  target:\n    apiVersion: apps.kruise.io/v1alpha1\n    kind: CloneSet\n  replicasPath: spec..replicas\n",
    },
    expected: [
      'interpreters/a.yaml:9:17: error: /spec/replicasPath: "spec..replicas" is not valid: expected a dotted field path such as spec.replicas or status.conditions [SCHEMA_VIOLATION]',
    ],
  },
  {
    name: "mapping key that is a collection",
    files: {
      "apps/web/config.yaml":
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\ndata:\n  ? [a, b]\n  : c\n",
    },
    expected: [
      "apps/web/config.yaml:6:5: error: YAML: mapping keys must be plain strings (Kubernetes objects are JSON) [YAML_SYNTAX]",
    ],
  },
  {
    name: "unresolved YAML tag (warning)",
    files: {
      "apps/web/config.yaml":
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\ndata:\n  MODE: !prod production\n",
    },
    expected: ["apps/web/config.yaml:6:9: warning: YAML: Unresolved tag: !prod [YAML_SYNTAX]"],
  },
  {
    name: "two Fleet documents",
    files: {
      "fleet.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata:\n  name: a\n---\napiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata:\n  name: b\n",
    },
    expected: [
      "fleet.yaml:6:1: error: a fleet has one Fleet object (fleet.yaml); remove this one [DUPLICATE_NAME]",
    ],
  },
  {
    name: "scheduler profile enabling an unknown plugin",
    files: {
      "fleet.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata:\n  name: f\nspec:\n  schedulerProfiles:\n    - name: custom\n      plugins:\n        score:\n          enabled: [Spread]\n",
    },
    expected: [
      'fleet.yaml:9:9: error: /spec/schedulerProfiles/0/plugins: scheduler profile "custom": unknown score plugin "Spread" (known: ClusterLocality, AvailableCapacity) [INVALID_FIELD_COMBINATION]',
    ],
  },
  {
    name: "notifications: a sink twice, a webhook without its secret, a forge status with one, a route to a missing sink",
    files: {
      "fleet.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata:\n  name: f\nspec:\n  notifications:\n    sinks:\n      - name: oncall\n        type: webhook\n      - name: oncall\n        type: slack\n        secretRef: chat\n      - name: forge\n        type: forgeStatus\n        secretRef: forge\n    routes:\n      - events: [failover, pruneBlocked]\n        sinks: [oncall, pager]\n",
    },
    expected: [
      "fleet.yaml:8:9: error: /spec/notifications/sinks/0: a webhook sink needs secretRef: the operator's file <secretRef>.url in --notification-secrets-dir holds its URL [MISSING_FIELD]",
      'fleet.yaml:10:15: error: /spec/notifications/sinks/1/name: a second sink named "oncall" [DUPLICATE_NAME]',
      "fleet.yaml:15:20: error: /spec/notifications/sinks/2/secretRef: a forgeStatus sink posts with the controller's forge token (--commit-status): it has no secretRef [INVALID_FIELD_COMBINATION]",
      'fleet.yaml:18:25: error: /spec/notifications/routes/0/sinks/1: no sink named "pager" in spec.notifications.sinks [UNKNOWN_REFERENCE]',
    ],
  },
  {
    name: "notifications: an event gitfleet does not send",
    files: {
      "fleet.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata:\n  name: f\nspec:\n  notifications:\n    sinks:\n      - name: forge\n        type: forgeStatus\n    routes:\n      - events: [clusterDown]\n        sinks: [forge]\n",
    },
    expected: [
      'fleet.yaml:11:18: error: /spec/notifications/routes/0/events/0: must be one of sourceInvalid, failover, clusterNotReady, clusterReady, rolloutHalted, pruneBlocked, migrationBatchFailed, migrationBatchSucceeded, autoscale, certificateExpiring, etcdAlarm, * (got "clusterDown") [SCHEMA_VIOLATION]',
    ],
  },
];

const APP = (name: string, spec: string) => `apiVersion: gitfleet.io/v1alpha1
kind: App
metadata:
  name: ${name}
spec:
${spec}`;

const FLEET = (spec: string) => `apiVersion: gitfleet.io/v1alpha1
kind: Fleet
metadata:
  name: t
spec:
${spec}`;

/** Ordering and control: dependsOn, sync waves and hooks, sync windows. */
export const SYNC_ORDER_CASES: readonly InvalidRepoCase[] = [
  {
    name: "dependsOn names an app that does not exist",
    files: { "apps/web/app.yaml": APP("web", "  namespace: shop\n  dependsOn: [mysql]\n") },
    expected: [
      'apps/web/app.yaml:7:15: error: /spec/dependsOn/0: unknown app "mysql"; apps are defined under apps/ [UNKNOWN_REFERENCE]',
    ],
  },
  {
    name: "dependsOn cycle between two apps",
    files: {
      "apps/web/app.yaml": APP("web", "  namespace: shop\n  dependsOn: [api]\n"),
      "apps/api/app.yaml": APP("api", "  namespace: shop\n  dependsOn:\n    - web\n"),
      "apps/api/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: api-config\n",
      "placements/api.yaml": PLACEMENT("api", "  apps: [api]\n"),
    },
    expected: [
      "apps/api/app.yaml:8:7: error: /spec/dependsOn/0: dependency cycle: api → web → api; an app on a cycle would wait for itself forever [DEPENDENCY_CYCLE]",
      "apps/web/app.yaml:7:15: error: /spec/dependsOn/0: dependency cycle: api → web → api; an app on a cycle would wait for itself forever [DEPENDENCY_CYCLE]",
    ],
  },
  {
    name: "an app that depends on itself",
    files: { "apps/web/app.yaml": APP("web", "  namespace: shop\n  dependsOn: [web]\n") },
    expected: [
      "apps/web/app.yaml:7:15: error: /spec/dependsOn/0: dependency cycle: web → web; an app on a cycle would wait for itself forever [DEPENDENCY_CYCLE]",
    ],
  },
  {
    name: "a sync wave that is not a whole number",
    files: {
      "apps/web/config.yaml":
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\n  annotations:\n    argocd.argoproj.io/sync-wave: "first"\n',
    },
    expected: [
      'apps/web/config.yaml:6:35: error: /metadata/annotations/argocd.argoproj.io~1sync-wave: argocd.argoproj.io/sync-wave must be a whole number such as "-1", "0" or "5", not "first" [INVALID_ANNOTATION]',
    ],
  },
  {
    name: "a hook phase gitfleet does not run",
    files: {
      "apps/web/config.yaml":
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\n  annotations:\n    gitfleet.io/hook: PreSync,PostDelete\n    gitfleet.io/hook-delete-policy: HookSucceded\n",
    },
    expected: [
      'apps/web/config.yaml:6:23: error: /metadata/annotations/gitfleet.io~1hook: gitfleet.io/hook: "PostDelete" is not a hook gitfleet runs; use PreSync, Sync, PostSync, SyncFail or Skip (deletion hooks are not supported) [INVALID_ANNOTATION]',
      'apps/web/config.yaml:7:37: error: /metadata/annotations/gitfleet.io~1hook-delete-policy: gitfleet.io/hook-delete-policy: "HookSucceded" is not a delete policy; use BeforeHookCreation, HookSucceeded or HookFailed [INVALID_ANNOTATION]',
    ],
  },
  {
    name: "a sync window with a bad schedule, duration and time zone",
    files: {
      "fleet.yaml": FLEET(
        '  syncWindows:\n    - kind: deny\n      schedule: "0 25 * * *"\n      duration: 2 hours\n      timeZone: Europe/Berlinn\n',
      ),
    },
    expected: [
      'fleet.yaml:8:17: error: /spec/syncWindows/0/schedule: "0 25 * * *" is not a cron schedule: hour: "25" is not in 0-23 [SCHEMA_VIOLATION]',
      'fleet.yaml:9:17: error: /spec/syncWindows/0/duration: "2 hours" is not a duration; write it like 30s, 10m or 1h30m [SCHEMA_VIOLATION]',
      'fleet.yaml:10:17: error: /spec/syncWindows/0/timeZone: "Europe/Berlinn" is not an IANA time zone; write it like UTC, Europe/Berlin or America/New_York [SCHEMA_VIOLATION]',
    ],
  },
  {
    name: "a sync window naming a cluster and an app that do not exist (patterns are not checked)",
    files: {
      "fleet.yaml": FLEET(
        '  syncWindows:\n    - name: freeze\n      kind: deny\n      schedule: "0 9 * * 1-5"\n      duration: 8h\n      apps: [web, shop-*, mysql]\n      clusters: [east, nort*, nowhere]\n',
      ),
    },
    expected: [
      'fleet.yaml:11:27: error: /spec/syncWindows/0/apps/2: unknown app "mysql"; apps are defined under apps/ [UNKNOWN_REFERENCE]',
      'fleet.yaml:12:31: error: /spec/syncWindows/0/clusters/2: unknown cluster "nowhere"; clusters are defined under clusters/ [UNKNOWN_REFERENCE]',
    ],
  },
];
