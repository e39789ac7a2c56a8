import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { asMap, type JsonMap } from "../../../src/apimachinery/json.js";
import { objectViolations } from "../../../src/apimachinery/openapi/object-schemas.js";
import { loadFleet } from "../../../src/load/load-fleet.js";
import { PKI_SECRETS } from "../../../src/manifests/controlplane/pki-layout.js";
import { ADDONS_APP, controlPlaneAppName } from "../../../src/model/controlplane/app-names.js";
import type { FileTree } from "../../../src/model/file-tree.js";
import { indexSelections } from "../../../src/model/selection-index.js";
import type { FleetModel } from "../../../src/model/types.js";
import { formatRenderedTree } from "../../../src/render/format-render.js";
import { renderFleet } from "../../../src/render/render-fleet.js";
import type { RenderedObject } from "../../../src/render/render-result.js";
import { readDirectoryTree } from "../../../src/source/read-directory.js";
import { HOSTED_EXAMPLE_DIR, OFFSITE_IMAGE, offsiteExample } from "../../helpers/hosted-example.js";

const encoder = new TextEncoder();
let example: FileTree;
let model: FleetModel;

beforeAll(async () => {
  example = await readDirectoryTree(HOSTED_EXAMPLE_DIR);
  const loaded = loadFleet(example);
  if (!loaded.model) throw new Error(JSON.stringify(loaded.problems));
  model = loaded.model;
});

const PKI_NAMES = new Set<string>(Object.values(PKI_SECRETS).map((s) => s.name));

// Every Secret a pod spec mounts (volumes, projected sources), by name.
function secretsMounted(object: JsonMap): string[] {
  const text = JSON.stringify(object);
  const projected = [...text.matchAll(/"secret":\{[^{}]*?"name":"([^"]+)"/g)].map((m) => m[1] as string);
  const volumes = [...text.matchAll(/"secretName":"([^"]+)"/g)].map((m) => m[1] as string);
  return [...projected, ...volumes];
}

// The files a pod's containers get from the pki volume.
function pkiPaths(object: JsonMap): string[] {
  return (
    JSON.stringify(object)
      .match(/"path":"[^"]+"/g)
      ?.map((m) => m.slice(8, -1)) ?? []
  );
}

describe("hosted control planes: render", () => {
  it("renders the documented example into the reviewed golden tree", async () => {
    const result = renderFleet(model);
    expect(result.errors).toEqual([]);
    await expect(formatRenderedTree(result)).toMatchFileSnapshot("../../golden/hosted-rendered.yaml");
  });

  it("puts each control plane on its host, addons in the hosted clusters, and no Secret data anywhere", () => {
    const result = renderFleet(model);
    const where = (app: string) => [
      ...new Set(result.objects.filter((o) => o.app === app).map((o) => o.cluster)),
    ];
    expect(where(controlPlaneAppName("pc-1"))).toEqual(["meta-1"]);
    expect(where(controlPlaneAppName("pc-2"))).toEqual(["meta-1"]);
    expect(where("gitfleet-etcd-etcd-a")).toEqual(["meta-1"]);
    expect(where(ADDONS_APP)).toEqual(["pc-1", "pc-2"]);
    // The credentials' Secrets are rendered by name, with no data: the host alone holds their data.
    const secrets = result.objects.filter((o) => o.object.kind === "Secret");
    expect(secrets.map((o) => o.path).filter((p) => p.includes("/gitfleet-cp-pc-1/"))).toHaveLength(9);
    expect(secrets.map((o) => o.path).filter((p) => p.includes("/gitfleet-etcd-etcd-a/"))).toEqual([
      "rendered/meta-1/gitfleet-etcd-etcd-a/core.Secret.etcd-ca.yaml",
      "rendered/meta-1/gitfleet-etcd-etcd-a/core.Secret.etcd-serving.yaml",
    ]);
    for (const s of secrets)
      expect(Object.keys(s.object).sort()).toEqual(["apiVersion", "kind", "metadata", "type"]);
    const of = (path: string) => result.objects.find((o) => o.path === path)?.object as JsonMap;
    expect(
      secretsMounted(of("rendered/meta-1/gitfleet-cp-pc-1/apps.Deployment.kube-apiserver.yaml")),
    ).toEqual([
      "ca",
      "apiserver-serving",
      "front-proxy-ca",
      "front-proxy-client",
      "service-account",
      "apiserver-etcd-client",
    ]);
    expect(
      secretsMounted(of("rendered/meta-1/gitfleet-cp-pc-1/apps.Deployment.kube-scheduler.yaml")),
    ).toEqual(["scheduler-kubeconfig"]);
    for (const object of result.objects.filter((o) => o.app.startsWith("gitfleet-")))
      for (const name of secretsMounted(object.object))
        expect(PKI_NAMES, `${object.path} mounts ${name}`).toContain(name);
  });

  it("gives a cluster with node pools what its machines join with and kube-proxy, each valid against Kubernetes 1.36's schemas, and one without pools neither", () => {
    const result = renderFleet(model);
    const addons = (cluster: string) =>
      result.objects.filter((o) => o.app === ADDONS_APP && o.cluster === cluster).map((o) => o.object);
    const names = (cluster: string) =>
      addons(cluster).map((o) => `${String(o.kind)}/${String(asMap(o.metadata).name)}`);
    expect(names("pc-2")).toEqual(
      expect.arrayContaining([
        "ClusterRoleBinding/gitfleet:kubelet-bootstrap",
        "ClusterRoleBinding/gitfleet:node-autoapprove-bootstrap",
        "ClusterRoleBinding/gitfleet:node-autoapprove-certificate-rotation",
        "RoleBinding/gitfleet:bootstrap-signer-clusterinfo",
        "DaemonSet/kube-proxy",
        "ConfigMap/kube-proxy",
      ]),
    );
    expect(names("pc-1").filter((n) => n.includes("kube-proxy") || n.includes("bootstrap"))).toEqual([]);
    for (const object of addons("pc-2"))
      expect(objectViolations("1.36", new Map(), object), `${String(object.kind)}`).toEqual([]);
    const daemonSet = addons("pc-2").find((o) => o.kind === "DaemonSet");
    expect(JSON.stringify(daemonSet)).toContain('"image":"registry.k8s.io/kube-proxy:v1.34.1"');
    const configMap = asMap(
      addons("pc-2").find((o) => o.kind === "ConfigMap" && asMap(o.metadata).name === "kube-proxy"),
    );
    expect(JSON.parse(String(asMap(configMap.data)["kubeconfig.conf"])).clusters[0].cluster.server).toBe(
      "https://pc-2.k8s.example.com:31443",
    );
  });

  it("gives a class's pod network to its clusters with node pools: Flannel valid against Kubernetes 1.36's schemas, node ranges from the controller-manager, kube-proxy's mode and range", () => {
    const tree = new Map(example);
    const standard = new TextDecoder().decode(tree.get("controlplanes/standard.yaml"));
    tree.set(
      "controlplanes/standard.yaml",
      encoder.encode(
        `${standard}  addons:\n    cni: { plugin: flannel, podCIDR: 10.244.0.0/16, backend: host-gw }\n    kubeProxy: { mode: ipvs }\n`,
      ),
    );
    const loaded = loadFleet(tree);
    expect(loaded.problems.filter((p) => p.severity === "error")).toEqual([]);
    const result = renderFleet(loaded.model as FleetModel);
    const addons = (cluster: string) =>
      result.objects.filter((o) => o.app === ADDONS_APP && o.cluster === cluster).map((o) => o.object);
    const named = (cluster: string, kind: string, name: string) =>
      addons(cluster).find((o) => o.kind === kind && asMap(o.metadata).name === name);
    const flannel = addons("pc-2").filter((o) => JSON.stringify(o).includes("flannel"));
    expect(flannel.map((o) => `${String(o.kind)}/${String(asMap(o.metadata).name)}`).sort()).toEqual([
      "ClusterRole/gitfleet:flannel",
      "ClusterRoleBinding/gitfleet:flannel",
      "ConfigMap/kube-flannel-cfg",
      "DaemonSet/kube-flannel-ds",
      "ServiceAccount/flannel",
    ]);
    for (const object of flannel)
      expect(objectViolations("1.36", new Map(), object), `${String(object.kind)}`).toEqual([]);
    // pc-1 has no node pools: no nodes to network.
    expect(addons("pc-1").filter((o) => JSON.stringify(o).includes("flannel"))).toEqual([]);
    const net = JSON.parse(
      String(asMap(asMap(named("pc-2", "ConfigMap", "kube-flannel-cfg")).data)["net-conf.json"]),
    );
    expect(net).toEqual({ Network: "10.244.0.0/16", Backend: { Type: "host-gw" } });
    const images = JSON.stringify(named("pc-2", "DaemonSet", "kube-flannel-ds")).match(/"image":"[^"]+"/g);
    expect([...new Set(images)]).toEqual([
      '"image":"ghcr.io/flannel-io/flannel-cni-plugin:v1.6.2-flannel1"',
      '"image":"ghcr.io/flannel-io/flannel:v0.26.7"',
    ]);
    const proxy = JSON.parse(
      String(asMap(asMap(named("pc-2", "ConfigMap", "kube-proxy")).data)["config.conf"]),
    );
    expect({ mode: proxy.mode, clusterCIDR: proxy.clusterCIDR }).toEqual({
      mode: "ipvs",
      clusterCIDR: "10.244.0.0/16",
    });
    // Each node gets a /24 of the range from the controller-manager, whose flags the class sets for all.
    for (const cluster of ["pc-1", "pc-2"]) {
      const manager = JSON.stringify(
        result.objects.find(
          (o) =>
            o.path === `rendered/meta-1/gitfleet-cp-${cluster}/apps.Deployment.kube-controller-manager.yaml`,
        )?.object,
      );
      for (const flag of [
        "--allocate-node-cidrs=true",
        "--cluster-cidr=10.244.0.0/16",
        "--node-cidr-mask-size=24",
      ])
        expect(manager).toContain(flag);
    }
  });

  it("sends each snapshot off the host for a class that asks: the snapshot first, then gitfleet's push with the CAs, the service-account key and the store, valid against Kubernetes 1.36's schemas", async () => {
    const tree = (await offsiteExample()) as FileTree;
    const loaded = loadFleet(tree);
    expect(loaded.problems.filter((p) => p.severity === "error")).toEqual([]);
    const result = renderFleet(loaded.model as FleetModel);
    const at = (path: string) => result.objects.find((o) => o.path === path)?.object;
    const cronJob = asMap(at("rendered/meta-1/gitfleet-cp-pc-3/batch.CronJob.etcd-backup.yaml"));
    expect(objectViolations("1.36", new Map(), cronJob)).toEqual([]);
    const pod = asMap(asMap(asMap(asMap(asMap(cronJob.spec).jobTemplate).spec).template).spec);
    const [snapshot] = pod.initContainers as JsonMap[];
    const [push] = pod.containers as JsonMap[];
    expect(asMap(snapshot).args).toContain("/backup/$(POD_NAME).db");
    expect(asMap(push)).toMatchObject({
      name: "push",
      image: OFFSITE_IMAGE,
      command: ["gitfleet"],
      args: [
        ...["backup", "push", "--cluster", "pc-3", "--snapshot", "/backup/$(POD_NAME).db"],
        ...["--pki-dir", "/pki", "--store-dir", "/store", "--work-dir", "/scratch"],
      ],
    });
    const mounts = (asMap(push).volumeMounts as JsonMap[]).map(
      (m) => `${String(m.name)}:${String(m.mountPath)}`,
    );
    expect(mounts).toEqual([
      "backup:/backup",
      "pki-ca:/pki/ca",
      "pki-front-proxy-ca:/pki/front-proxy-ca",
      "pki-etcd-ca:/pki/etcd-ca",
      "pki-service-account:/pki/service-account",
      "store:/store",
      "work:/scratch",
    ]);
    // The push holds the CAs, the service-account key and the store; no leaf certificate, no kubeconfig.
    expect(secretsMounted(pod).sort()).toEqual(
      ["ca", "etcd-backup-store", "etcd-ca", "etcd-serving", "front-proxy-ca", "service-account"].sort(),
    );
    // Its scratch space fits a snapshot as large as the 4Gi quota allows, and 64Mi more.
    expect((pod.volumes as JsonMap[]).find((v) => v.name === "work")).toEqual({
      name: "work",
      emptyDir: { sizeLimit: "4160Mi" },
    });
    // The store's Secret is rendered without data; the credentials step fills it.
    expect(at("rendered/meta-1/gitfleet-cp-pc-3/core.Secret.etcd-backup-store.yaml")).not.toHaveProperty(
      "data",
    );
    // A class that keeps its snapshots in the host: the snapshot alone, no store Secret.
    const kept = asMap(
      renderFleet(model).objects.find((o) => o.path.endsWith("batch.CronJob.etcd-backup.yaml"))?.object,
    );
    expect(JSON.stringify(kept)).not.toContain("initContainers");
    expect(
      renderFleet(model).objects.some((o) => o.path.endsWith("core.Secret.etcd-backup-store.yaml")),
    ).toBe(false);
  });

  it.each([
    {
      what: "an off-host class keeping 3",
      file: "controlplanes/offsite.yaml",
      edit: (text: string) => text.replace("    backup:\n", "    backup:\n      keep: 3\n"),
      path: "rendered/meta-1/gitfleet-cp-pc-3/batch.CronJob.etcd-backup.yaml",
      init: ["snapshot", "push"],
      image: OFFSITE_IMAGE,
    },
    {
      what: "a shared etcd keeping 2 in the host, with gitfleet's image",
      file: "controlplanes/standard.yaml",
      edit: (text: string) =>
        text.replace("    backup:\n", `    backup:\n      keep: 2\n      image: ${OFFSITE_IMAGE}-prune\n`),
      path: "rendered/meta-1/gitfleet-etcd-etcd-a/batch.CronJob.etcd-backup.yaml",
      init: ["snapshot"],
      image: `${OFFSITE_IMAGE}-prune`,
    },
  ])(
    "keeps a count of snapshots ($what): gitfleet's image prunes the volume once the snapshot (and push) ran",
    async ({ file, edit, path, init, image }) => {
      const tree = (await offsiteExample()) as Map<string, Uint8Array>;
      const text = edit(new TextDecoder().decode(tree.get(file)));
      expect(text).toContain("keep:");
      tree.set(file, encoder.encode(text));
      const loaded = loadFleet(tree as FileTree);
      expect(loaded.problems.filter((p) => p.severity === "error")).toEqual([]);
      const cronJob = asMap(
        renderFleet(loaded.model as FleetModel).objects.find((o) => o.path === path)?.object,
      );
      expect(objectViolations("1.36", new Map(), cronJob)).toEqual([]);
      const pod = asMap(asMap(asMap(asMap(asMap(cronJob.spec).jobTemplate).spec).template).spec);
      const inits = pod.initContainers as JsonMap[];
      expect(inits.map((c) => c.name)).toEqual(init);
      const keep = file.endsWith("offsite.yaml") ? "3" : "2";
      // Off the host, the push prunes the store to the same count once the store took the backup.
      const push = inits.find((c) => c.name === "push");
      if (push) expect((push.args as string[]).slice(-2)).toEqual(["--keep", keep]);
      expect(pod.containers).toEqual([
        expect.objectContaining({
          name: "prune",
          image,
          command: ["gitfleet"],
          args: ["backup", "prune", "--dir", "/backup", "--keep", keep, "--taken", "$(POD_NAME).db"],
          volumeMounts: [{ name: "backup", mountPath: "/backup" }],
          securityContext: expect.objectContaining({
            readOnlyRootFilesystem: true,
            allowPrivilegeEscalation: false,
          }),
        }),
      ]);
    },
  );

  it.each([
    {
      what: "a snapshot in the volume",
      source: "snapshot: etcd-backup-29412345-abcde.db",
      prune: ["--hold", "etcd-backup-29412345-abcde.db"],
      push: [],
    },
    {
      what: "an off-host backup by key",
      source: "backup: hosted/pc-3/20261206T060000Z-etcd-backup-29412345-abcde.tar.age",
      prune: [],
      push: ["--hold", "hosted/pc-3/20261206T060000Z-etcd-backup-29412345-abcde.tar.age"],
    },
    { what: "the latest off-host backup", source: "backup: latest", prune: [], push: [] },
  ])("holds what a restore in the repo names ($what) out of the count", async ({ source, prune, push }) => {
    const tree = (await offsiteExample()) as Map<string, Uint8Array>;
    const offsite = new TextDecoder().decode(tree.get("controlplanes/offsite.yaml"));
    tree.set(
      "controlplanes/offsite.yaml",
      encoder.encode(offsite.replace("    backup:\n", "    backup:\n      keep: 3\n")),
    );
    const args = () => {
      const loaded = loadFleet(tree as FileTree);
      expect(loaded.problems.filter((p) => p.severity === "error")).toEqual([]);
      const cronJob = asMap(
        renderFleet(loaded.model as FleetModel).objects.find(
          (o) => o.path === "rendered/meta-1/gitfleet-cp-pc-3/batch.CronJob.etcd-backup.yaml",
        )?.object,
      );
      const pod = asMap(asMap(asMap(asMap(asMap(cronJob.spec).jobTemplate).spec).template).spec);
      const argsOf = (containers: unknown, name: string) =>
        ((containers as JsonMap[]).find((c) => c.name === name)?.args ?? []) as string[];
      // What follows the count: the push's --keep, and the prune's --taken with its file.
      const push = argsOf(pod.initContainers, "push");
      const prune = argsOf(pod.containers, "prune");
      expect(prune).toContain("--taken");
      return { prune: prune.slice(prune.indexOf("--taken") + 2), push: push.slice(push.indexOf("--keep")) };
    };
    expect(args()).toEqual({ prune: [], push: ["--keep", "3"] });
    tree.set(
      "controlplanes/restore-pc-3.yaml",
      encoder.encode(
        `apiVersion: gitfleet.io/v1alpha1\nkind: EtcdRestore\nmetadata:\n  name: restore-pc-3\nspec:\n  cluster: pc-3\n  ${source}\n`,
      ),
    );
    expect(args()).toEqual({ prune, push: ["--keep", "3", ...push] });
  });

  it("refuses a class that keeps a count with no gitfleet image to prune with, at the keep line", async () => {
    const tree = (await offsiteExample()) as Map<string, Uint8Array>;
    const standard = new TextDecoder().decode(tree.get("controlplanes/standard.yaml"));
    tree.set(
      "controlplanes/standard.yaml",
      encoder.encode(standard.replace("    backup:\n", "    backup:\n      keep: 5\n")),
    );
    const line = standard.split("\n").indexOf("    backup:") + 2;
    const errors = loadFleet(tree as FileTree).problems.filter((p) => p.severity === "error");
    expect(errors).toEqual([
      expect.objectContaining({
        file: "controlplanes/standard.yaml",
        line,
        column: 13,
        message: expect.stringContaining("keeping 5 snapshots needs gitfleet's image"),
      }),
    ]);
  });

  it("gives each cluster's addons its own Service range and the control planes' etcd their prefixes", () => {
    const tree = new Map(example);
    const pc2 = new TextDecoder().decode(tree.get("clusters/pc-2.yaml"));
    tree.set(
      "clusters/pc-2.yaml",
      encoder.encode(
        pc2.replace("    class: standard\n", "    class: standard\n    serviceCIDR: 10.112.0.0/16\n"),
      ),
    );
    const result = renderFleet(loadFleet(tree).model as FleetModel);
    const dns = (cluster: string) =>
      asMap(
        result.objects.find((o) => o.cluster === cluster && o.path.endsWith("core.Service.kube-dns.yaml"))
          ?.object.spec,
      ).clusterIP;
    expect(dns("pc-1")).toBe("10.96.0.10");
    expect(dns("pc-2")).toBe("10.112.0.10");
    const args = (cluster: string) =>
      JSON.stringify(
        result.objects.find(
          (o) => o.path === `rendered/meta-1/gitfleet-cp-${cluster}/apps.Deployment.kube-apiserver.yaml`,
        )?.object,
      );
    expect(args("pc-1")).toContain("--etcd-prefix=/pc-1/registry");
    expect(args("pc-2")).toContain("--etcd-prefix=/pc-2/registry");
    expect(args("pc-2")).toContain("--service-cluster-ip-range=10.112.0.0/16");
  });

  it("is selected by its own Placement only: a repo Placement's selector for every Deployment leaves it alone", () => {
    const tree = new Map(example);
    tree.set(
      "placements/all-deployments.yaml",
      encoder.encode(
        "apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: all-deployments\nspec:\n  priority: 10\n  resourceSelectors:\n    - { apiVersion: apps/v1, kind: Deployment }\n",
      ),
    );
    const loaded = loadFleet(tree).model as FleetModel;
    const index = indexSelections(loaded);
    const selected = [
      ...index.selectedBy({ resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment" }] }),
    ];
    expect(selected.map((r) => `${r.app}/${r.name}`)).toEqual(["web/web"]);
    const apiServer = loaded.apps
      .find((a) => a.name === "gitfleet-cp-pc-1")
      ?.resources.find((r) => r.name === "kube-apiserver");
    expect(index.placementsOf(apiServer as never).map((p) => p.metadata.name)).toEqual(["gitfleet-cp-pc-1"]);
  });
});

// Random hosted clusters on one host: what the render writes for them is always valid and carries
// no credential, whatever the expose type, etcd mode, versions and flags.
const hostedSpec = fc.record({
  expose: fc.constantFrom("LoadBalancer", "NodePort", "HostPort"),
  shared: fc.boolean(),
  patch: fc.integer({ min: 0, max: 12 }),
  trail: fc.boolean(),
  flags: fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/), fc.string({ maxLength: 30 }), {
    maxKeys: 3,
  }),
  replicas: fc.integer({ min: 1, max: 3 }),
  cidr: fc.constantFrom("10.96.0.0/12", "172.20.0.0/16", "192.168.128.0/20"),
});

type HostedSpec = typeof hostedSpec extends fc.Arbitrary<infer T> ? T : never;

function fleetOf(specs: readonly HostedSpec[]): FileTree {
  const tree = new Map<string, Uint8Array>();
  tree.set(
    "clusters/meta-1.yaml",
    encoder.encode("apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: meta-1\nspec: {}\n"),
  );
  specs.forEach((spec, i) => {
    const name = `pc-${i}`;
    const port = 16000 + i * 10;
    const expose =
      spec.expose === "HostPort"
        ? `{ type: HostPort, port: ${port}, address: 10.0.0.5 }`
        : spec.expose === "NodePort"
          ? `{ type: NodePort, port: ${30000 + i}, address: nodes.example.com }`
          : "{ type: LoadBalancer }";
    const etcd = spec.shared
      ? `{ mode: Shared, name: shared-${spec.expose === "HostPort" ? "hp" : "svc"}${spec.expose === "HostPort" ? ", port: 15000" : ""} }`
      : "{ mode: Dedicated }";
    tree.set(
      `clusters/${name}.yaml`,
      encoder.encode(
        `apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: ${name}\nspec:\n  controlPlane:\n    host: meta-1\n    class: c-${i}\n    serviceCIDR: ${spec.cidr}\n    etcd: ${etcd}\n    expose: ${expose}\n`,
      ),
    );
    tree.set(
      `controlplanes/c-${i}.yaml`,
      encoder.encode(
        `apiVersion: gitfleet.io/v1alpha1\nkind: ControlPlaneClass\nmetadata:\n  name: c-${i}\nspec:\n  version: v1.34.${spec.patch}\n  apiServer:\n    replicas: ${spec.replicas}\n    extraArgs: ${JSON.stringify(spec.flags)}\n  scheduler: { version: ${spec.trail ? "v1.33.4" : `v1.34.${spec.patch}`} }\n  etcd: { version: 3.6.4-0 }\n`,
      ),
    );
  });
  return tree;
}

// A generated object holds no credential: Secrets by name without data, mounts of gitfleet's own
// Secrets only, and the CA's key in the controller-manager (which signs) alone.
function expectNoCredential(object: RenderedObject): void {
  expect(object.text).not.toContain("BEGIN");
  if (object.object.kind === "Secret") {
    expect(object.object.data ?? object.object.stringData).toBeUndefined();
    expect(PKI_NAMES).toContain(String(asMap(object.object.metadata).name));
  }
  for (const name of secretsMounted(object.object)) expect(PKI_NAMES).toContain(name);
  const holdsCaKey = pkiPaths(object.object).includes("ca.key");
  expect(holdsCaKey, object.path).toBe(object.path.endsWith("apps.Deployment.kube-controller-manager.yaml"));
}

describe("hosted control planes: render properties", () => {
  it("renders valid objects with no Secret data, only named credentials, and the CA key for the controller-manager alone", () => {
    fc.assert(
      fc.property(fc.array(hostedSpec, { minLength: 1, maxLength: 4 }), (specs) => {
        // Shared etcds on host ports need every sharer to agree on the address and port: keep one kind per run.
        const loaded = loadFleet(fleetOf(specs));
        const errors = loaded.problems.filter((p) => p.severity === "error");
        const mixedShared =
          new Set(specs.filter((s) => s.shared).map((s) => s.expose === "HostPort")).size > 1;
        if (errors.length > 0 && !mixedShared)
          throw new Error(errors.map((p) => `${p.file}:${p.line} ${p.message}`).join("\n"));
        if (!loaded.model) return;
        const result = renderFleet(loaded.model);
        expect(result.errors).toEqual([]);
        for (const object of result.objects.filter((o) => o.app.startsWith("gitfleet-")))
          expectNoCredential(object);
      }),
      { numRuns: 60 },
    );
  });
});
