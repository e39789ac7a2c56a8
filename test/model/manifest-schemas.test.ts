import { describe, expect, it } from "vitest";
import { createParseCache, loadFleet } from "../../src/load/load-fleet.js";
import { formatProblem } from "../../src/model/problem.js";
import { minimalFleetWith } from "../helpers/minimal-fleet.js";

// Manifests against the Kubernetes OpenAPI schemas gitfleet ships (and a custom resource against its
// CRD's openAPIV3Schema): each violation at its file, line and column, with the message.

const deployment = (spec: string) =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  selector:\n    matchLabels: {app: api}\n  template:\n    metadata:\n      labels: {app: api}\n    spec:\n${spec}`;
const container = (fields: string) =>
  deployment(`      containers:\n        - name: main\n          image: nginx\n${fields}`);
const service = (spec: string) => `apiVersion: v1\nkind: Service\nmetadata:\n  name: api\nspec:\n${spec}`;
const job = (spec: string) =>
  `apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: once\nspec:\n${spec}  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: main, image: busybox}]\n`;

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
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
              required: [size]
              properties:
                size: {type: integer, minimum: 1, maximum: 10}
                color: {type: string, enum: [red, blue]}
                tags: {type: array, maxItems: 2, items: {type: string}}
                name: {type: string, maxLength: 5}
                extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
`;
const widget = (spec: string) =>
  `apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n${spec}`;

const CASES: readonly (readonly [string, string, string])[] = [
  [
    "negative replicas",
    deployment("      containers: [{name: main, image: nginx}]\n").replace(
      "spec:\n  selector",
      "spec:\n  replicas: -4\n  selector",
    ),
    "6:13: error: /spec/replicas: must be greater than or equal to 0, not -4",
  ],
  [
    "a named containerPort",
    container('          ports:\n            - containerPort: "http"\n'),
    '16:30: error: /spec/template/spec/containers/0/ports/0/containerPort: must be an integer, not the string "http"',
  ],
  [
    "a port past 65535",
    container("          ports:\n            - containerPort: 70000\n"),
    "16:30: error: /spec/template/spec/containers/0/ports/0/containerPort: must be less than or equal to 65535, not 70000",
  ],
  [
    "port zero",
    container("          ports:\n            - containerPort: 0\n"),
    "16:30: error: /spec/template/spec/containers/0/ports/0/containerPort: must be greater than or equal to 1, not 0",
  ],
  [
    "an unknown container field",
    container("          imagePolicy: Always\n"),
    '15:11: error: /spec/template/spec/containers/0/imagePolicy: unknown field "imagePolicy"',
  ],
  [
    "an unknown pull policy",
    container("          imagePullPolicy: Sometimes\n"),
    '15:28: error: /spec/template/spec/containers/0/imagePullPolicy: must be one of "Always", "Never", "IfNotPresent", not "Sometimes"',
  ],
  [
    "a protocol in lower case",
    container("          ports:\n            - containerPort: 80\n              protocol: tcp\n"),
    '17:25: error: /spec/template/spec/containers/0/ports/0/protocol: must be one of "TCP", "UDP", "SCTP", not "tcp"',
  ],
  [
    "args as a string",
    container('          args: "--verbose"\n'),
    '15:17: error: /spec/template/spec/containers/0/args: must be an array, not the string "--verbose"',
  ],
  [
    "an env value as a number",
    container("          env:\n            - name: LEVEL\n              value: 3\n"),
    "17:22: error: /spec/template/spec/containers/0/env/0/value: must be a string, not an integer",
  ],
  [
    "an env entry without a name",
    container("          env:\n            - value: x\n"),
    '16:15: error: /spec/template/spec/containers/0/env/0: missing required field "name"',
  ],
  [
    "a container without a name",
    deployment("      containers:\n        - image: nginx\n"),
    '13:11: error: /spec/template/spec/containers/0: missing required field "name"',
  ],
  [
    "a restart policy that does not exist",
    deployment("      restartPolicy: Sometimes\n      containers: [{name: main, image: nginx}]\n"),
    '12:22: error: /spec/template/spec/restartPolicy: must be one of "Always", "OnFailure", "Never", not "Sometimes"',
  ],
  [
    "a negative grace period",
    deployment("      terminationGracePeriodSeconds: -1\n      containers: [{name: main, image: nginx}]\n"),
    "12:38: error: /spec/template/spec/terminationGracePeriodSeconds: must be greater than or equal to 0, not -1",
  ],
  [
    "a probe period of zero",
    container(
      "          readinessProbe:\n            periodSeconds: 0\n            httpGet: {path: /, port: 80}\n",
    ),
    "16:28: error: /spec/template/spec/containers/0/readinessProbe/periodSeconds: must be greater than or equal to 1, not 0",
  ],
  [
    "a probe scheme in lower case",
    container("          livenessProbe:\n            httpGet: {path: /, port: 80, scheme: https}\n"),
    '16:50: error: /spec/template/spec/containers/0/livenessProbe/httpGet/scheme: must be one of "HTTP", "HTTPS", not "https"',
  ],
  [
    "a strategy that does not exist",
    deployment("      containers: [{name: main, image: nginx}]\n").replace(
      "spec:\n  selector",
      "spec:\n  strategy: {type: BlueGreen}\n  selector",
    ),
    '6:20: error: /spec/strategy/type: must be one of "Recreate", "RollingUpdate", not "BlueGreen"',
  ],
  [
    "a negative revision history",
    deployment("      containers: [{name: main, image: nginx}]\n").replace(
      "spec:\n  selector",
      "spec:\n  revisionHistoryLimit: -2\n  selector",
    ),
    "6:25: error: /spec/revisionHistoryLimit: must be greater than or equal to 0, not -2",
  ],
  [
    "replicas beyond 32 bits",
    deployment("      containers: [{name: main, image: nginx}]\n").replace(
      "spec:\n  selector",
      "spec:\n  replicas: 3000000000\n  selector",
    ),
    "6:13: error: /spec/replicas: 3000000000 does not fit in 32 bits",
  ],
  [
    "a misspelled spec field",
    deployment("      containers: [{name: main, image: nginx}]\n").replace(
      "spec:\n  selector",
      "spec:\n  replica: 2\n  selector",
    ),
    '6:3: error: /spec/replica: unknown field "replica"',
  ],
  [
    "a Deployment without a selector",
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  template:\n    spec:\n      containers: [{name: main, image: nginx}]\n",
    '6:3: error: /spec: missing required field "selector"',
  ],
  [
    "a kind that does not exist",
    "apiVersion: apps/v1\nkind: Deploymnt\nmetadata:\n  name: api\n",
    "2:7: error: /kind: Kubernetes 1.36.3 serves no kind Deploymnt in apps/v1",
  ],
  [
    "a version Kubernetes no longer serves",
    "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: api\n",
    "2:7: error: /kind: Kubernetes 1.36.3 serves no kind Ingress in extensions/v1beta1",
  ],
  [
    "a Service type that does not exist",
    service("  type: Internal\n  ports: [{port: 80}]\n"),
    '6:9: error: /spec/type: must be one of "ClusterIP", "NodePort", "LoadBalancer", "ExternalName", not "Internal"',
  ],
  [
    "a Service port as a string",
    service('  ports:\n    - port: "80"\n'),
    '7:13: error: /spec/ports/0/port: must be an integer, not the string "80"',
  ],
  [
    "a nodePort past 65535",
    service("  type: NodePort\n  ports:\n    - port: 80\n      nodePort: 70000\n"),
    "9:17: error: /spec/ports/0/nodePort: must be less than or equal to 65535, not 70000",
  ],
  [
    "a targetPort as a list",
    service("  ports:\n    - port: 80\n      targetPort: [8080]\n"),
    "8:19: error: /spec/ports/0/targetPort: must be an integer or a string, not an array",
  ],
  [
    "a Job with negative parallelism",
    job("  parallelism: -1\n"),
    "6:16: error: /spec/parallelism: must be greater than or equal to 0, not -1",
  ],
  [
    "a Job with a negative backoff limit",
    job("  backoffLimit: -3\n"),
    "6:17: error: /spec/backoffLimit: must be greater than or equal to 0, not -3",
  ],
  [
    "a CronJob concurrency policy that does not exist",
    "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: nightly\nspec:\n  schedule: '0 1 * * *'\n  concurrencyPolicy: Sometimes\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          restartPolicy: Never\n          containers: [{name: main, image: busybox}]\n",
    '7:22: error: /spec/concurrencyPolicy: must be one of "Allow", "Forbid", "Replace", not "Sometimes"',
  ],
  [
    "a ConfigMap value as a number",
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  LEVEL: 3\n",
    "6:10: error: /data/LEVEL: must be a string, not an integer",
  ],
  [
    "a Secret type as a number",
    "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\ntype: 3\n",
    "5:7: error: /type: must be a string, not an integer",
  ],
  [
    "a PVC access mode that does not exist",
    "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\nspec:\n  accessModes: [ReadWriteSometimes]\n  resources: {requests: {storage: 1Gi}}\n",
    '6:17: error: /spec/accessModes/0: must be one of "ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod", not "ReadWriteSometimes"',
  ],
  [
    "an HPA with maxReplicas 0",
    "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: api\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: api}\n  maxReplicas: 0\n",
    "7:16: error: /spec/maxReplicas: must be greater than or equal to 1, not 0",
  ],
  [
    "a toleration effect that does not exist",
    deployment(
      "      tolerations: [{key: gpu, operator: Exists, effect: NoRun}]\n      containers: [{name: main, image: nginx}]\n",
    ),
    '12:58: error: /spec/template/spec/tolerations/0/effect: must be one of "NoSchedule", "PreferNoSchedule", "NoExecute", not "NoRun"',
  ],
  [
    "a custom resource without a required field",
    widget("  color: red\n"),
    '6:3: error: /spec: missing required field "size"',
  ],
  [
    "a custom resource beyond its maximum",
    widget("  size: 11\n"),
    "6:9: error: /spec/size: must be less than or equal to 10, not 11",
  ],
  [
    "a custom resource outside its enum",
    widget("  size: 2\n  color: green\n"),
    '7:10: error: /spec/color: must be one of "red", "blue", not "green"',
  ],
  [
    "a custom resource with an unknown field",
    widget("  size: 2\n  colour: red\n"),
    '7:3: error: /spec/colour: unknown field "colour"',
  ],
  [
    "a custom resource with too many items",
    widget("  size: 2\n  tags: [a, b, c]\n"),
    "7:9: error: /spec/tags: must have at most 2 items",
  ],
  [
    "a custom resource with too long a string",
    widget("  size: 2\n  name: toolong\n"),
    "7:9: error: /spec/name: must be at most 5 characters long",
  ],
];

describe("manifests against the Kubernetes OpenAPI schemas", () => {
  it.each(CASES)("%s", (_case, manifest, expected) => {
    const loaded = loadFleet(minimalFleetWith({ "apps/web/crd.yaml": CRD, "apps/web/case.yaml": manifest }));
    const problems = loaded.problems.filter((p) => p.code === "SCHEMA_VIOLATION").map(formatProblem);
    expect(problems).toEqual([`apps/web/case.yaml:${expected} [SCHEMA_VIOLATION]`]);
    expect(loaded.model).toBeUndefined();
  });

  it("accepts what the schemas allow: open fields, int-or-string, quantities as numbers", () => {
    const loaded = loadFleet(
      minimalFleetWith({
        "apps/web/crd.yaml": CRD,
        "apps/web/widget.yaml": widget("  size: 2\n  extra: {anything: [1, {deep: true}]}\n"),
        "apps/web/svc.yaml": service("  ports:\n    - port: 80\n      targetPort: http\n"),
        "apps/web/cpu.yaml": container("          resources: {requests: {cpu: 1, memory: 64Mi}}\n"),
      }),
    );
    expect(loaded.problems.filter((p) => p.severity === "error").map(formatProblem)).toEqual([]);
  });

  it("validates against the minor the fleet declares", () => {
    // 1.34 and 1.36 both serve apps/v1 Deployments; a kind only a newer release serves is refused
    // under an older one.
    const fleet = (minor: string) =>
      `apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata:\n  name: fleet\nspec:\n  kubernetesVersion: "${minor}"\n`;
    const policy =
      "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingAdmissionPolicy\nmetadata:\n  name: p\nspec: {}\n";
    const under = (minor: string) =>
      loadFleet(minimalFleetWith({ "fleet.yaml": fleet(minor), "apps/web/policy.yaml": policy }))
        .problems.filter((p) => p.code === "SCHEMA_VIOLATION")
        .map((p) => p.message);
    expect(under("1.34")).toEqual([
      "Kubernetes 1.34.4 serves no kind MutatingAdmissionPolicy in admissionregistration.k8s.io/v1",
    ]);
    expect(under("1.36")).toEqual([]);
  });

  it("checks a manifest again when its CRD or the fleet's minor changes, with a parse cache shared by the loads", () => {
    // The cached manifest file is the same object on every load; what it is checked against is not.
    const cache = createParseCache();
    const policy =
      "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingAdmissionPolicy\nmetadata:\n  name: p\nspec: {}\n";
    const fleet = (minor: string) =>
      `apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata:\n  name: fleet\nspec:\n  kubernetesVersion: "${minor}"\n`;
    const load = (crd: string, minor: string) =>
      loadFleet(
        minimalFleetWith({
          "fleet.yaml": fleet(minor),
          "apps/web/crd.yaml": crd,
          "apps/web/widget.yaml": widget("  size: 2\n  name: toolong\n"),
          "apps/web/policy.yaml": policy,
        }),
        cache,
      )
        .problems.filter((p) => p.code === "SCHEMA_VIOLATION")
        .map(formatProblem);
    const tooLong =
      "apps/web/widget.yaml:7:9: error: /spec/name: must be at most 5 characters long [SCHEMA_VIOLATION]";
    const notServed =
      "apps/web/policy.yaml:2:7: error: /kind: Kubernetes 1.34.4 serves no kind MutatingAdmissionPolicy in admissionregistration.k8s.io/v1 [SCHEMA_VIOLATION]";
    const longer = CRD.replace("maxLength: 5", "maxLength: 10");
    expect(load(CRD, "1.36")).toEqual([tooLong]);
    expect(load(longer, "1.36")).toEqual([]);
    expect(load(CRD, "1.36")).toEqual([tooLong]);
    expect(load(CRD, "1.34")).toEqual([notServed, tooLong]);
    expect(load(CRD, "1.36")).toEqual([tooLong]);
  });
});
