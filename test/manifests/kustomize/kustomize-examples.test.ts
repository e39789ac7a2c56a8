import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import type { JsonMap } from "../../../src/apimachinery/json.js";
import { buildKustomization } from "../../../src/manifests/kustomize/build-kustomization.js";
import { fileTreeFromText } from "../../../src/model/file-tree.js";

const run = promisify(execFile);

// The scenarios kustomize's own documentation walks through — hello world with staging and
// production overlays, config generation and rollouts by hash, secret generation, patching many
// objects at once, components, replacements, images, namespaces with RBAC, inline deletes — each
// built by gitfleet's engine and by `kubectl kustomize` (kustomize v5.5): the same objects.

const root = mkdtempSync(join(tmpdir(), "gitfleet-kustomize-examples-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: the-deployment
spec:
  replicas: 3
  selector:
    matchLabels:
      deployment: hello
  template:
    metadata:
      labels:
        deployment: hello
    spec:
      containers:
        - name: the-container
          image: monopole/hello:1
          command: ["/hello", "--port=8080", "--enableRiskyFeature=$(ENABLE_RISKY)"]
          ports:
            - containerPort: 8080
          env:
            - name: ALT_GREETING
              valueFrom:
                configMapKeyRef:
                  name: the-map
                  key: altGreeting
            - name: ENABLE_RISKY
              valueFrom:
                configMapKeyRef:
                  name: the-map
                  key: enableRisky
`;
const SERVICE = `kind: Service
apiVersion: v1
metadata:
  name: the-service
spec:
  selector:
    deployment: hello
  type: LoadBalancer
  ports:
    - protocol: TCP
      port: 8666
      targetPort: 8080
`;
const CONFIG_MAP = `apiVersion: v1
kind: ConfigMap
metadata:
  name: the-map
data:
  altGreeting: "Good Morning!"
  enableRisky: "false"
`;
const HELLO_BASE = {
  "base/deployment.yaml": DEPLOYMENT,
  "base/service.yaml": SERVICE,
  "base/configMap.yaml": CONFIG_MAP,
  "base/kustomization.yaml":
    "metadata:\n  name: arbitrary\ncommonLabels:\n  app: hello\nresources:\n  - deployment.yaml\n  - service.yaml\n  - configMap.yaml\n",
};

const EXAMPLES: Record<
  string,
  { files: Record<string, string>; binary?: Record<string, Uint8Array>; target: string }
> = {
  "hello world: the base": { files: HELLO_BASE, target: "base" },
  "hello world: staging overlay (prefix, label, map patch)": {
    files: {
      ...HELLO_BASE,
      "overlays/staging/kustomization.yaml":
        "namePrefix: staging-\ncommonLabels:\n  variant: staging\n  org: acmeCorporation\ncommonAnnotations:\n  note: Hello, I am staging!\nresources:\n  - ../../base\npatches:\n  - path: map.yaml\n",
      "overlays/staging/map.yaml":
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: the-map\ndata:\n  altGreeting: "Have a pineapple!"\n  enableRisky: "true"\n',
    },
    target: "overlays/staging",
  },
  "hello world: production overlay (replicas patch)": {
    files: {
      ...HELLO_BASE,
      "overlays/production/kustomization.yaml":
        "namePrefix: production-\ncommonLabels:\n  variant: production\n  org: acmeCorporation\ncommonAnnotations:\n  note: Hello, I am production!\nresources:\n  - ../../base\npatches:\n  - path: deployment.yaml\n",
      "overlays/production/deployment.yaml":
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: the-deployment\nspec:\n  replicas: 10\n",
    },
    target: "overlays/production",
  },
  "config generation: a generated map rolls the deployment by its hash": {
    files: {
      "base/deployment.yaml": DEPLOYMENT,
      "base/common.properties": "color=blue\nplanet=earth\n",
      "base/kustomization.yaml":
        "resources: [deployment.yaml]\nconfigMapGenerator:\n  - name: the-map\n    files: [common.properties]\n    literals:\n      - altGreeting=Good Morning!\n      - enableRisky=false\n",
      "overlays/staging/kustomization.yaml":
        "resources: [../../base]\nnameSuffix: -staging\nconfigMapGenerator:\n  - name: the-map\n    behavior: merge\n    literals:\n      - altGreeting=Have a pineapple!\n      - enableRisky=true\n",
    },
    target: "overlays/staging",
  },
  "secret generation: literals, files and a TLS secret": {
    files: {
      "app/tls.crt": "-----BEGIN CERTIFICATE-----\nnot-a-real-certificate\n-----END CERTIFICATE-----\n",
      "app/tls.key": "-----BEGIN PRIVATE KEY-----\nnot-a-real-key\n-----END PRIVATE KEY-----\n",
      "app/app.env": "DB_USER=example\nDB_PASSWORD=example-password\n",
      "app/deployment.yaml": DEPLOYMENT.replaceAll("the-map", "app-settings").replace(
        "          ports:",
        "          envFrom:\n            - secretRef:\n                name: app-env\n          ports:",
      ),
      "app/kustomization.yaml":
        "resources: [deployment.yaml]\nsecretGenerator:\n  - name: app-tls\n    files: [tls.crt, tls.key]\n    type: kubernetes.io/tls\n  - name: app-env\n    envs: [app.env]\nconfigMapGenerator:\n  - name: app-settings\n    literals: [altGreeting=hi, enableRisky=false]\ngeneratorOptions:\n  labels:\n    generated: by-kustomize\n",
    },
    target: "app",
  },
  "binary files in a config map: base64 in lines of 70": {
    files: {
      "app/kustomization.yaml":
        "configMapGenerator:\n  - name: assets\n    files: [logo.bin, short.bin, near.bin]\nsecretGenerator:\n  - name: keys\n    files: [near.bin, logo.bin]\n",
    },
    binary: {
      "app/logo.bin": Uint8Array.from({ length: 120 }, (_, i) => (i * 37 + 255) % 256),
      "app/short.bin": Uint8Array.from([0, 98, 255, 254]),
      "app/near.bin": Uint8Array.from({ length: 51 }, (_, i) => 255 - i),
    },
    target: "app",
  },
  "patching many objects: one patch by kind and label selector": {
    files: {
      "app/deployments.yaml": ["web", "api", "worker"]
        .map(
          (name, i) =>
            `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ${name}\n  labels:\n    tier: ${i < 2 ? "front" : "back"}\nspec:\n  selector:\n    matchLabels: {app: ${name}}\n  template:\n    metadata:\n      labels: {app: ${name}}\n    spec:\n      containers:\n        - name: ${name}\n          image: example/${name}:1\n`,
        )
        .join("---\n"),
      "app/kustomization.yaml":
        "resources: [deployments.yaml]\npatches:\n  - target:\n      kind: Deployment\n      labelSelector: tier=front\n    patch: |-\n      apiVersion: apps/v1\n      kind: Deployment\n      metadata:\n        name: not-important\n      spec:\n        template:\n          spec:\n            containers:\n              - name: istio-proxy\n                image: docker.io/istio/proxyv2\n                args: [proxy, sidecar]\n  - target:\n      kind: Deployment\n      name: w.*\n    patch: |-\n      - op: add\n        path: /spec/replicas\n        value: 4\n",
    },
    target: "app",
  },
  "components: optional features shared by overlays": {
    files: {
      ...HELLO_BASE,
      "components/ldap/kustomization.yaml":
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nconfigMapGenerator:\n  - name: ldap-settings\n    literals: [LDAP_URL=ldap://ldap.example.com]\npatches:\n  - path: sidecar.yaml\n",
      "components/ldap/sidecar.yaml":
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: the-deployment\nspec:\n  template:\n    spec:\n      containers:\n        - name: ldap-proxy\n          image: example/ldap-proxy:2\n          envFrom:\n            - configMapRef:\n                name: ldap-settings\n",
      "components/recaptcha/kustomization.yaml":
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nsecretGenerator:\n  - name: recaptcha\n    literals: [SITE_KEY=example-site-key]\n",
      "overlays/community/kustomization.yaml":
        "resources: [../../base]\ncomponents: [../../components/ldap, ../../components/recaptcha]\nnamePrefix: community-\n",
    },
    target: "overlays/community",
  },
  "replacements: the service's name into the deployment's env": {
    files: {
      ...HELLO_BASE,
      "overlays/dev/kustomization.yaml":
        "resources: [../../base]\nnameSuffix: -dev\nreplacements:\n  - source:\n      kind: Service\n      name: the-service\n      fieldPath: metadata.name\n    targets:\n      - select:\n          kind: Deployment\n        fieldPaths:\n          - spec.template.spec.containers.[name=the-container].env.[name=ALT_GREETING].value\n        options:\n          create: true\n  - source:\n      kind: Service\n      fieldPath: spec.ports.0.port\n    targets:\n      - select:\n          kind: Deployment\n        fieldPaths:\n          - spec.template.spec.containers.0.command.1\n        options:\n          delimiter: '='\n          index: 1\n",
    },
    target: "overlays/dev",
  },
  "images: new names, tags and digests": {
    files: {
      ...HELLO_BASE,
      "overlays/pinned/kustomization.yaml": `resources: [../../base]\nimages:\n  - name: monopole/hello\n    newName: registry.example.com/hello\n    newTag: "2"\n  - name: example/unused\n    digest: sha256:${"b".repeat(64)}\n`,
    },
    target: "overlays/pinned",
  },
  "images: references with a registry port, no tag, a tag or a digest": {
    files: {
      "ported/deployment.yaml": DEPLOYMENT.replace(
        "          image: monopole/hello:1\n",
        "          image: registry.example.com:5000/team/app\n",
      ).replace(
        "      containers:\n",
        `      initContainers:\n        - name: init\n          image: registry.example.com:5000/team/init:1.0\n        - name: pinned\n          image: localhost:5000/pinned@sha256:${"c".repeat(64)}\n      containers:\n`,
      ),
      "ported/kustomization.yaml": `resources: [deployment.yaml]\nimages:\n  - name: registry.example.com:5000/team/app\n    newTag: "2.0"\n  - name: registry.example.com:5000/team/init\n    newName: mirror.example.com:5001/team/init\n  - name: localhost:5000/pinned\n    newTag: "3"\n`,
    },
    target: "ported",
  },
  "namespace and RBAC: subjects and role references follow the rename": {
    files: {
      "rbac/sa.yaml": "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: deployer\n",
      "rbac/role.yaml":
        'apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: deploy\nrules:\n  - apiGroups: [apps]\n    resources: [deployments]\n    verbs: ["*"]\n',
      "rbac/binding.yaml":
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: deployer\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: deploy\nsubjects:\n  - kind: ServiceAccount\n    name: deployer\n    namespace: default\n",
      "rbac/deployment.yaml": DEPLOYMENT.replace(
        "    spec:\n      containers:",
        "    spec:\n      serviceAccountName: deployer\n      containers:",
      ),
      "rbac/kustomization.yaml":
        "namespace: team-a\nnamePrefix: a-\nresources: [sa.yaml, role.yaml, binding.yaml, deployment.yaml]\n",
    },
    target: "rbac",
  },
  "inline deletes and list edits: $patch delete, JSON 6902 remove": {
    files: {
      ...HELLO_BASE,
      "overlays/slim/kustomization.yaml":
        "resources: [../../base]\npatches:\n  - patch: |-\n      apiVersion: v1\n      kind: Service\n      metadata:\n        name: the-service\n      $patch: delete\n  - target:\n      kind: Deployment\n      name: the-deployment\n    patch: |-\n      - op: remove\n        path: /spec/template/spec/containers/0/env/1\n      - op: replace\n        path: /spec/template/spec/containers/0/command\n        value: [/hello, --port=9090]\n",
    },
    target: "overlays/slim",
  },
  "labels with and without selectors, replicas, name suffix": {
    files: {
      ...HELLO_BASE,
      "overlays/labelled/kustomization.yaml":
        "resources: [../../base]\nnameSuffix: -v2\nlabels:\n  - pairs: {team: checkout}\n    includeSelectors: true\n  - pairs: {cost-center: cc-7}\n    includeTemplates: true\nreplicas:\n  - name: the-deployment\n    count: 6\n",
    },
    target: "overlays/labelled",
  },
};

function sortObjects(objects: readonly JsonMap[]): JsonMap[] {
  const key = (o: JsonMap) => {
    const m = (o.metadata ?? {}) as JsonMap;
    return `${String(o.kind)}/${String(m.namespace ?? "")}/${String(m.name)}`;
  };
  return [...objects].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

describe("kustomize's documented scenarios, built by gitfleet and by kubectl kustomize", () => {
  it.each(Object.entries(EXAMPLES))("%s", async (name, { files, binary, target }) => {
    const dir = join(root, name.replace(/[^a-z0-9]+/gi, "-"));
    const tree = new Map([...fileTreeFromText(files), ...Object.entries(binary ?? {})]);
    for (const [path, text] of tree) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    const { stdout } = await run("kubectl", ["kustomize", join(dir, target)], { maxBuffer: 16 * 2 ** 20 });
    const theirs = sortObjects(parseAllDocuments(stdout).map((d) => d.toJS() as JsonMap));
    const built = buildKustomization(tree, target);
    expect(built.problems).toEqual([]);
    expect(theirs.length).toBeGreaterThan(0);
    expect(sortObjects(built.objects.map((o) => o.object))).toEqual(theirs);
  });
});
