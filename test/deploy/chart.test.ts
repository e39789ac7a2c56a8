import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { FleetMetrics } from "../../src/metrics/fleet-metrics.js";
import { helm, helmBinary } from "../helpers/helm.js";
import { startProbedServer, statusOf } from "../helpers/probed-server.js";

/**
 * The Helm chart (charts/gitfleet) as helm itself lints and renders it, and the plain manifests
 * (deploy/gitfleet.yaml) rendered from it, compared byte for byte. The second tier applies the
 * manifests to a real API server (test/e2e/replicas.e2e.ts).
 */
const root = fileURLToPath(new URL("../..", import.meta.url));
const CHART = join(root, "charts/gitfleet");
const URL_SET = "repo.url=https://git.example.com/platform/fleet.git";
let binary: string;
let home: string;

beforeAll(() => {
  binary = helmBinary();
  home = mkdtempSync(join(tmpdir(), "gitfleet-chart-"));
}, 20 * 60_000);
afterAll(() => rmSync(home, { recursive: true, force: true }));

type Doc = { kind: string; metadata: { name: string }; spec?: Record<string, unknown> } & Record<
  string,
  unknown
>;

async function render(...sets: string[]): Promise<Doc[]> {
  const args = ["template", "gitfleet", CHART, "--namespace", "gitfleet-system"];
  for (const set of [URL_SET, ...sets]) args.push("--set", set);
  const text = await helm(binary, home, args);
  return parseAllDocuments(text)
    .map((doc) => doc.toJS() as Doc | null)
    .filter((doc): doc is Doc => doc !== null);
}

const byKind = (docs: Doc[], kind: string) => docs.filter((d) => d.kind === kind);
interface Container {
  readonly args: string[];
  readonly securityContext: unknown;
  readonly readinessProbe: { readonly httpGet: { readonly path: string } };
  readonly livenessProbe: { readonly httpGet: { readonly path: string } };
  readonly resources: { readonly requests: unknown };
  readonly env: { readonly valueFrom?: { readonly secretKeyRef?: unknown } }[];
}
interface PodSpec {
  readonly containers: Container[];
  readonly automountServiceAccountToken: boolean;
}
const podSpec = (docs: Doc[]) =>
  (byKind(docs, "Deployment")[0] as unknown as { spec: { template: { spec: PodSpec } } }).spec.template.spec;
const container = (docs: Doc[]) => podSpec(docs).containers[0] as Container;

// The Git credentials' mount and the Secret items behind it.
function gitVolume(docs: Doc[]): { mount: unknown; items: unknown } {
  const spec = podSpec(docs) as unknown as {
    containers: { volumeMounts: { name: string }[] }[];
    volumes: { name: string; secret?: { items?: unknown } }[];
  };
  return {
    mount: spec.containers[0]?.volumeMounts.find((m) => m.name === "git-credentials"),
    items: spec.volumes.find((v) => v.name === "git-credentials")?.secret?.items,
  };
}

describe("the Helm chart", () => {
  it("passes helm lint", async () => {
    const out = await helm(binary, home, ["lint", CHART, "--strict", "--set", URL_SET]);
    expect(out).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
  });

  it("renders the plain manifests in deploy/gitfleet.yaml byte for byte", async () => {
    const out = join(home, "gitfleet.yaml");
    await promisify(execFile)("bash", [join(root, "scripts/render-manifests.sh"), binary, out], {
      env: { ...process.env, HOME: home },
    });
    expect(readFileSync(out, "utf8")).toBe(readFileSync(join(root, "deploy/gitfleet.yaml"), "utf8"));
  });

  it("runs replicas with leader election, hardened, probed, sized, with least-privilege RBAC and no Secret", async () => {
    const docs = await render();
    expect(docs.map((d) => d.kind).sort()).toEqual([
      "Deployment",
      "PodDisruptionBudget",
      "Role",
      "RoleBinding",
      "Service",
      "ServiceAccount",
    ]);
    const main = container(docs);
    expect(main.args).toEqual(
      expect.arrayContaining([
        "run",
        "--leader-elect",
        "--leader-elect-lease-duration=15s",
        "--leader-elect-renew-deadline=10s",
        "--leader-elect-retry-period=2s",
        "--standby-follow-interval=10s",
        "--repo=https://git.example.com/platform/fleet.git",
        "--controller-id=gitfleet@$(POD_NAME)",
      ]),
    );
    expect(main.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
    });
    expect(main.readinessProbe.httpGet.path).toBe("/readyz");
    expect(main.livenessProbe.httpGet.path).toBe("/healthz");
    expect(main.resources.requests).toEqual({ cpu: "500m", memory: "1Gi" });
    // Credentials only as optional keys of the operator's Secret: none in the chart.
    expect(JSON.stringify(docs)).not.toMatch(/"kind":"Secret"/);
    expect(main.env.filter((e) => e.valueFrom?.secretKeyRef)).toHaveLength(4);
    const [role] = byKind(docs, "Role") as [Doc & { rules: unknown[] }];
    expect(role.rules).toEqual([
      { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create"] },
      {
        apiGroups: ["coordination.k8s.io"],
        resources: ["leases"],
        resourceNames: ["gitfleet"],
        verbs: ["get", "update", "patch"],
      },
    ]);
    expect(byKind(docs, "PodDisruptionBudget")[0]?.spec).toMatchObject({ maxUnavailable: 1 });
  });

  it("answers only to its Service's names, localhost and the Ingress host: the Host check is on", async () => {
    const docs = await render(
      "ingress.enabled=true",
      "ingress.host=fleet.example.com",
      "http.allowedHosts={status.example.com}",
    );
    const names = container(docs)
      .args.filter((arg) => arg.startsWith("--allowed-hosts="))
      .map((arg) => arg.slice("--allowed-hosts=".length));
    expect(names).toEqual([
      "gitfleet",
      "gitfleet.gitfleet-system",
      "gitfleet.gitfleet-system.svc",
      "gitfleet.gitfleet-system.svc.cluster.local",
      "localhost",
      "fleet.example.com",
      "status.example.com",
    ]);
    expect(byKind(docs, "Ingress")[0]?.spec).toMatchObject({ rules: [{ host: "fleet.example.com" }] });
    // The controller's endpoint with exactly these names: a rebinding page's name is refused, the
    // Service's, the Ingress host's and any address (the kubelet's probes) are answered.
    const server = await startProbedServer(names);
    try {
      const status = (host: string) => statusOf(`${server.url}/healthz`, host);
      expect(await status("rebind.attacker.example:8080")).toBe(403);
      expect(await status("gitfleet.gitfleet-system.svc:8080")).toBe(200);
      expect(await status("fleet.example.com")).toBe(200);
      expect(await status("localhost:8080")).toBe(200);
      expect(await status("10.244.1.7:8080")).toBe(200);
    } finally {
      await server.close();
    }
  });

  it("refuses an Ingress without a host", async () => {
    await expect(render("ingress.enabled=true")).rejects.toThrow(/ingress.enabled needs ingress.host/);
  });

  it("alerts and charts only on metrics the controller exports", async () => {
    const docs = await render("prometheusRule.enabled=true", "grafanaDashboard.enabled=true");
    const rule = byKind(docs, "PrometheusRule")[0] as unknown as {
      spec: { groups: { rules: { alert: string; expr: string }[] }[] };
    };
    const rules = rule.spec.groups.flatMap((g) => g.rules);
    expect(rules.map((r) => r.alert)).toEqual([
      "GitfleetMemberNotReady",
      "GitfleetReconcileFailing",
      "GitfleetNotReady",
      "GitfleetPruneBlocked",
      "GitfleetMemberCredentialExpiring",
      "GitfleetAppDegraded",
      "GitfleetReplicasUnplaced",
      "GitfleetLeaderChurn",
      "GitfleetDeliveryBacklog",
    ]);
    const dashboard = byKind(docs, "ConfigMap").find((d) =>
      d.metadata.name.endsWith("-dashboard"),
    ) as unknown as {
      metadata: { labels: Record<string, string> };
      data: Record<string, string>;
    };
    expect(dashboard.metadata.labels.grafana_dashboard).toBe("1");
    const panels = (
      JSON.parse(dashboard.data["gitfleet.json"] ?? "") as { panels: { targets: { expr: string }[] }[] }
    ).panels;
    const queries = [...rules.map((r) => r.expr), ...panels.flatMap((p) => p.targets.map((t) => t.expr))];
    // The names the controller's registry exports (a histogram as its _bucket, _sum and _count series).
    const metrics = new FleetMetrics(() => ({
      ready: true,
      leading: true,
      clusters: new Map(),
      synced: new Map(),
      decisions: [],
    }));
    const exported = new Set(
      (await metrics.registry.getMetricsAsJSON()).flatMap((m) =>
        String(m.type) === "histogram" ? [`${m.name}_bucket`, `${m.name}_sum`, `${m.name}_count`] : [m.name],
      ),
    );
    const used = new Set(queries.flatMap((q) => q.match(/\bgitfleet_[a-z_]+/g) ?? []));
    expect(used.size).toBeGreaterThan(10);
    expect([...used].filter((name) => !exported.has(name))).toEqual([]);
  });

  it("keeps values.schema.json what values.yaml gives (node scripts/chart-values-schema.mjs)", () => {
    const check = spawnSync(process.execPath, [join(root, "scripts/chart-values-schema.mjs"), "--check"], {
      encoding: "utf8",
    });
    expect(check.stderr).toBe("");
    expect(check.status).toBe(0);
  });

  it.each([
    ["a count that is not a number", "replicaCount=two", "at '/replicaCount': got string, want integer"],
    ["a switch that is not a boolean", "sync=yes", "at '/sync': got string, want boolean"],
    [
      "a Git authentication it does not know",
      "credentials.gitAuth=password",
      "at '/credentials/gitAuth': value must be one of",
    ],
    ["a misspelled value", "replicaCont=3", "additional properties 'replicaCont' not allowed"],
    [
      "a misspelled value in a section",
      "signing.keySecrets=x",
      "additional properties 'keySecrets' not allowed",
    ],
    ["a log level it does not know", "logLevel=loud", "at '/logLevel': value must be one of"],
    ["a team source without its URL", "builds.teamSources[0].tokenKey=games", "missing property 'url'"],
  ])("refuses %s before rendering anything", async (_, set, message) => {
    await expect(render(set)).rejects.toThrow(message);
  });

  it("refuses OIDC sign-in without its client id, public URL or Secret", async () => {
    await expect(render("access.oidc.issuer=https://idp.example.com/")).rejects.toThrow(
      /access.oidc.clientId is required/,
    );
    await expect(
      render("access.oidc.issuer=https://idp.example.com/", "access.oidc.clientId=gitfleet"),
    ).rejects.toThrow(/access.publicUrl \(or dashboardUrl\) is required/);
    await expect(
      render(
        "access.oidc.issuer=https://idp.example.com/",
        "access.oidc.clientId=gitfleet",
        "access.publicUrl=https://fleet.example.com",
      ),
    ).rejects.toThrow(/access.oidc.existingSecret is required/);
  });

  it.each([
    {
      name: "a ServiceMonitor when asked",
      sets: ["serviceMonitor.enabled=true"],
      check: (docs: Doc[]) => expect(byKind(docs, "ServiceMonitor")).toHaveLength(1),
    },
    {
      name: "the operator's build bounds: chart sources, hook kinds and objects per app as flags",
      sets: [
        "builds.chartSources={https://charts.example.com/stable,oci://ghcr.io/org}",
        "builds.allowHookKinds={Namespace}",
        "builds.maxAppObjects=5000",
      ],
      check: (docs: Doc[]) =>
        expect(container(docs).args).toEqual(
          expect.arrayContaining([
            "--chart-source=https://charts.example.com/stable",
            "--chart-source=oci://ghcr.io/org",
            "--allow-hook-kind=Namespace",
            "--max-app-objects=5000",
          ]),
        ),
    },
    {
      name: "no sync: --no-sync and no members' kubeconfig",
      sets: ["sync=false"],
      check: (docs: Doc[]) => {
        expect(container(docs).args).toContain("--no-sync");
        expect(JSON.stringify(docs)).not.toContain("/etc/gitfleet/members");
      },
    },
    {
      name: "one replica without leader election: no Role, no PDB, no API token",
      sets: ["replicaCount=1", "leaderElection.enabled=false"],
      check: (docs: Doc[]) => {
        expect(byKind(docs, "Role")).toEqual([]);
        expect(byKind(docs, "PodDisruptionBudget")).toEqual([]);
        expect(container(docs).args).not.toContain("--leader-elect");
        expect(podSpec(docs).automountServiceAccountToken).toBe(false);
      },
    },
    {
      name: "shards: --shards and each shard's Lease in the Role, nothing more",
      sets: ["shards=3", "replicaCount=3"],
      check: (docs: Doc[]) => {
        expect(container(docs).args).toContain("--shards=3");
        const [role] = byKind(docs, "Role") as [Doc & { rules: { resourceNames?: string[] }[] }];
        expect(role.rules[1]?.resourceNames).toEqual([
          "gitfleet",
          "gitfleet-shard-0",
          "gitfleet-shard-1",
          "gitfleet-shard-2",
        ]);
      },
    },
    {
      name: "a token file: --token-file on a Secret directory mount the kubelet updates, no token variable",
      sets: ["credentials.gitAuth=file"],
      check: (docs: Doc[]) => {
        expect(container(docs).args).toContain("--token-file=/etc/gitfleet/git/git-token");
        expect(JSON.stringify(container(docs).env)).not.toContain("GITFLEET_GIT_TOKEN");
        expect(gitVolume(docs)).toEqual({
          mount: { name: "git-credentials", mountPath: "/etc/gitfleet/git", readOnly: true },
          items: [{ key: "git-token", path: "git-token" }],
        });
      },
    },
    {
      name: "a GitHub App: its ids and the key file, no token",
      sets: [
        "credentials.gitAuth=githubApp",
        "credentials.githubApp.appId=4242",
        "credentials.githubApp.installationId=77",
        "credentials.githubApp.apiUrl=https://github.example.com/api/v3",
      ],
      check: (docs: Doc[]) => {
        expect(container(docs).args).toEqual(
          expect.arrayContaining([
            "--github-app-id=4242",
            "--github-app-installation-id=77",
            "--github-app-key-file=/etc/gitfleet/git/github-app-key",
            "--github-api-url=https://github.example.com/api/v3",
          ]),
        );
        expect(JSON.stringify(container(docs).env)).not.toContain("GITFLEET_GIT_TOKEN");
        expect(gitVolume(docs).items).toEqual([{ key: "github-app-key", path: "github-app-key" }]);
      },
    },
    {
      name: "an SSH remote: the deploy key and known_hosts as files",
      sets: ["repo.url=git@github.com:platform/fleet.git", "credentials.gitAuth=ssh"],
      check: (docs: Doc[]) => {
        expect(container(docs).args).toEqual(
          expect.arrayContaining([
            "--repo=git@github.com:platform/fleet.git",
            "--ssh-key-file=/etc/gitfleet/git/ssh-key",
            "--ssh-known-hosts=/etc/gitfleet/git/known_hosts",
          ]),
        );
        expect(gitVolume(docs).items).toEqual([
          { key: "ssh-key", path: "ssh-key" },
          { key: "known_hosts", path: "known_hosts" },
        ]);
      },
    },
    {
      name: "commit statuses and notifications: the forge's flags, its token and the sinks' Secret as directory mounts",
      sets: [
        "forge.kind=gitea",
        "forge.apiUrl=https://code.example.com/api/v1",
        "forge.tokenFromSecret=true",
        "commitStatus.enabled=true",
        "dashboardUrl=https://fleet.example.com",
        "notifications.existingSecret=gitfleet-notify",
      ],
      check: (docs: Doc[]) => {
        expect(container(docs).args).toEqual(
          expect.arrayContaining([
            "--forge=gitea",
            "--forge-api-url=https://code.example.com/api/v1",
            "--forge-token-file=/etc/gitfleet/forge/forge-token",
            "--commit-status",
            "--commit-status-context=gitfleet/reconcile",
            "--dashboard-url=https://fleet.example.com",
            "--notification-secrets-dir=/etc/gitfleet/notify",
          ]),
        );
        const mounts = (container(docs) as unknown as { volumeMounts: { name: string; mountPath: string }[] })
          .volumeMounts;
        expect(mounts).toEqual(
          expect.arrayContaining([
            { name: "forge-token", mountPath: "/etc/gitfleet/forge", readOnly: true },
            { name: "notification-secrets", mountPath: "/etc/gitfleet/notify", readOnly: true },
          ]),
        );
        const volumes = (podSpec(docs) as unknown as { volumes: { name: string; secret?: unknown }[] })
          .volumes;
        expect(volumes.find((v) => v.name === "notification-secrets")?.secret).toEqual({
          secretName: "gitfleet-notify",
        });
        expect(volumes.find((v) => v.name === "forge-token")?.secret).toMatchObject({
          items: [{ key: "forge-token", path: "forge-token" }],
        });
      },
    },
    {
      name: "sops: the age key Secret mounted read-only and given to --sops-age-key-file, only when syncing",
      sets: ["sops.ageKeySecret=gitfleet-sops"],
      check: (docs: Doc[]) => {
        expect(container(docs).args).toContain("--sops-age-key-file=/etc/gitfleet/sops/keys.txt");
        const mounts = (container(docs) as unknown as { volumeMounts: { name: string }[] }).volumeMounts;
        expect(mounts).toContainEqual({
          name: "sops-age-key",
          mountPath: "/etc/gitfleet/sops",
          readOnly: true,
        });
        const volumes = (podSpec(docs) as unknown as { volumes: { name: string; secret?: unknown }[] })
          .volumes;
        expect(volumes.find((v) => v.name === "sops-age-key")?.secret).toEqual({
          secretName: "gitfleet-sops",
          items: [{ key: "keys.txt", path: "keys.txt" }],
        });
      },
    },
    {
      name: "no sops key without its Secret, nor without sync",
      sets: [],
      check: async (docs: Doc[]) => {
        expect(JSON.stringify(container(docs).args)).not.toContain("--sops");
        const noSync = await render("sops.ageKeySecret=gitfleet-sops", "sync=false");
        expect(JSON.stringify(noSync)).not.toContain("sops");
      },
    },
    {
      name: "backup stores: each store's Secret mounted read-only under --backup-stores-dir, only when syncing",
      sets: [
        "backupStores[0].name=offsite",
        "backupStores[0].existingSecret=gitfleet-backup-offsite",
        "backupStores[1].name=second",
        "backupStores[1].existingSecret=gitfleet-backup-second",
      ],
      check: async (docs: Doc[]) => {
        expect(container(docs).args).toContain("--backup-stores-dir=/etc/gitfleet/backup-stores");
        const mounts = (container(docs) as unknown as { volumeMounts: { name: string }[] }).volumeMounts;
        for (const store of ["offsite", "second"]) {
          expect(mounts).toContainEqual({
            name: `backup-store-${store}`,
            mountPath: `/etc/gitfleet/backup-stores/${store}`,
            readOnly: true,
          });
          const volumes = (podSpec(docs) as unknown as { volumes: { name: string; secret?: unknown }[] })
            .volumes;
          expect(volumes.find((v) => v.name === `backup-store-${store}`)?.secret).toEqual({
            secretName: `gitfleet-backup-${store}`,
          });
        }
        const noSync = await render(
          "backupStores[0].name=offsite",
          "backupStores[0].existingSecret=gitfleet-backup-offsite",
          "sync=false",
        );
        expect(JSON.stringify(noSync)).not.toContain("backup-store");
        expect(JSON.stringify(await render())).not.toContain("backup-store");
      },
    },
    {
      name: "access: OIDC sign-in from a Secret's client secret and session key, tokens, anonymous reading",
      sets: [
        "access.oidc.issuer=https://gitea.example.com",
        "access.oidc.clientId=gitfleet",
        "access.oidc.existingSecret=gitfleet-oidc",
        "access.oidc.scopes={openid,profile,groups}",
        "dashboardUrl=https://fleet.example.com",
        "access.apiTokensSecret=gitfleet-tokens",
        "access.anonymousRead=true",
      ],
      check: (docs: Doc[]) => {
        expect(container(docs).args).toEqual(
          expect.arrayContaining([
            "--oidc-issuer=https://gitea.example.com",
            "--oidc-client-id=gitfleet",
            "--oidc-client-secret-file=/etc/gitfleet/oidc/client-secret",
            "--session-key-file=/etc/gitfleet/oidc/session-key",
            "--public-url=https://fleet.example.com",
            "--oidc-scopes=openid,profile,groups",
            "--api-tokens-file=/etc/gitfleet/api-tokens/api-tokens",
            "--anonymous-read",
          ]),
        );
        const mounts = (container(docs) as unknown as { volumeMounts: { name: string }[] }).volumeMounts;
        expect(mounts).toContainEqual({ name: "oidc", mountPath: "/etc/gitfleet/oidc", readOnly: true });
        expect(mounts).toContainEqual({
          name: "api-tokens",
          mountPath: "/etc/gitfleet/api-tokens",
          readOnly: true,
        });
        const volumes = (podSpec(docs) as unknown as { volumes: { name: string; secret?: unknown }[] })
          .volumes;
        expect(volumes.find((v) => v.name === "oidc")?.secret).toEqual({
          secretName: "gitfleet-oidc",
          items: [
            { key: "client-secret", path: "client-secret" },
            { key: "session-key", path: "session-key" },
          ],
        });
      },
    },
    {
      name: "team sources: each allowed repository, with its token from a mounted Secret's key",
      sets: [
        "builds.teamSources[0].url=https://git.example.com/games/",
        "builds.teamSources[0].tokenKey=games",
        "builds.teamSources[1].url=https://git.example.com/public.git",
        "builds.teamSourceTokensSecret=gitfleet-team-sources",
      ],
      check: (docs: Doc[]) => {
        expect(container(docs).args).toEqual(
          expect.arrayContaining([
            "--team-source=https://git.example.com/games/=/etc/gitfleet/team-sources/games",
            "--team-source=https://git.example.com/public.git",
          ]),
        );
        const mounts = (container(docs) as unknown as { volumeMounts: { name: string }[] }).volumeMounts;
        expect(mounts).toContainEqual({
          name: "team-source-tokens",
          mountPath: "/etc/gitfleet/team-sources",
          readOnly: true,
        });
        const volumes = (podSpec(docs) as unknown as { volumes: { name: string; secret?: unknown }[] })
          .volumes;
        expect(volumes.find((v) => v.name === "team-source-tokens")?.secret).toEqual({
          secretName: "gitfleet-team-sources",
        });
      },
    },
    {
      name: "signing: the key signs status commits, trusted keys are read, a kubeconfig directory and extra volumes are mounted",
      sets: [
        "signing.keySecret=gitfleet-signing",
        "signing.trustedKeysSecret=gitfleet-trusted",
        "members.kubeconfigDirSecret=gitfleet-members",
        "extraVolumes[0].name=ca",
        "extraVolumes[0].configMap.name=corporate-ca",
        "extraVolumeMounts[0].name=ca",
        "extraVolumeMounts[0].mountPath=/etc/ssl/corporate",
      ],
      check: (docs: Doc[]) => {
        expect(container(docs).args).toEqual(
          expect.arrayContaining([
            "--signing-key=/etc/gitfleet/signing/signing-key",
            "--trusted-keys=/etc/gitfleet/trusted/trusted-keys",
            "--kubeconfig-dir=/etc/gitfleet/member-kubeconfigs",
          ]),
        );
        const mounts = (container(docs) as unknown as { volumeMounts: { name: string }[] }).volumeMounts;
        for (const [name, mountPath] of [
          ["signing-key", "/etc/gitfleet/signing"],
          ["trusted-keys", "/etc/gitfleet/trusted"],
          ["member-kubeconfigs", "/etc/gitfleet/member-kubeconfigs"],
        ])
          expect(mounts).toContainEqual({ name, mountPath, readOnly: true });
        expect(mounts).toContainEqual({ name: "ca", mountPath: "/etc/ssl/corporate" });
        const volumes = (
          podSpec(docs) as unknown as { volumes: { name: string; secret?: unknown; configMap?: unknown }[] }
        ).volumes;
        expect(volumes.find((v) => v.name === "signing-key")?.secret).toEqual({
          secretName: "gitfleet-signing",
          defaultMode: 0o440,
          items: [{ key: "signing-key", path: "signing-key" }],
        });
        expect(volumes.find((v) => v.name === "ca")?.configMap).toEqual({ name: "corporate-ca" });
      },
    },
    {
      name: "probes' timings, zone spread with the chart's selector, and a NetworkPolicy on the port",
      sets: [
        "probes.startup.failureThreshold=90",
        "topologySpreadConstraints[0].maxSkew=1",
        "topologySpreadConstraints[0].topologyKey=topology.kubernetes.io/zone",
        "topologySpreadConstraints[0].whenUnsatisfiable=ScheduleAnyway",
        "networkPolicy.enabled=true",
        "networkPolicy.ingressFrom[0].namespaceSelector.matchLabels.team=ingress",
      ],
      check: (docs: Doc[]) => {
        const probe = (container(docs) as unknown as { startupProbe: unknown }).startupProbe;
        expect(probe).toEqual({
          httpGet: { path: "/healthz", port: "http" },
          periodSeconds: 2,
          failureThreshold: 90,
        });
        const spread = (podSpec(docs) as unknown as { topologySpreadConstraints: unknown[] })
          .topologySpreadConstraints;
        expect(spread).toEqual([
          {
            maxSkew: 1,
            topologyKey: "topology.kubernetes.io/zone",
            whenUnsatisfiable: "ScheduleAnyway",
            labelSelector: {
              matchLabels: { "app.kubernetes.io/name": "gitfleet", "app.kubernetes.io/instance": "gitfleet" },
            },
          },
        ]);
        const policy = byKind(docs, "NetworkPolicy")[0] as unknown as { spec: unknown };
        expect(policy.spec).toEqual({
          podSelector: {
            matchLabels: { "app.kubernetes.io/name": "gitfleet", "app.kubernetes.io/instance": "gitfleet" },
          },
          policyTypes: ["Ingress"],
          ingress: [
            {
              from: [{ namespaceSelector: { matchLabels: { team: "ingress" } } }],
              ports: [{ port: "http", protocol: "TCP" }],
            },
          ],
        });
      },
    },
    {
      name: "no way in by default: no access flags, so nobody may read the API",
      sets: [],
      check: (docs: Doc[]) => {
        expect(JSON.stringify(container(docs).args)).not.toMatch(/--oidc|--api-tokens|--anonymous|--session/);
      },
    },
    {
      name: "no forge flags by default",
      sets: [],
      check: (docs: Doc[]) => {
        expect(JSON.stringify(container(docs).args)).not.toMatch(/--forge|--commit-status|--notification/);
      },
    },
  ])("renders $name", async ({ sets, check }) => {
    await check(await render(...sets));
  });

  it.each([
    [["repo.url="], /repo.url is required/],
    [["replicaCount=3", "leaderElection.enabled=false"], /replicaCount above 1 needs leaderElection.enabled/],
    [["replicaCount=1", "leaderElection.enabled=false", "shards=2"], /shards need leaderElection.enabled/],
    [["shards=2", "sync=false"], /shards divide the members' sync/],
    [["shards=65"], /shards: at most 64/],
    [
      ["credentials.gitAuth=token"],
      /credentials\/gitAuth': value must be one of 'env', 'file', 'githubApp', 'ssh'/,
    ],
    [["credentials.gitAuth=githubApp"], /needs credentials.githubApp.appId and installationId/],
  ])("refuses %j", async (sets, message) => {
    const args = ["template", "gitfleet", CHART];
    for (const set of sets) args.push("--set", set);
    await expect(helm(binary, home, args)).rejects.toThrow(message);
  });
});
