import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { asList, asMap } from "../../src/apimachinery/json.js";
import { loadFleet } from "../../src/load/load-fleet.js";
import { FleetMetrics } from "../../src/metrics/fleet-metrics.js";
import type { ObservedReplicas } from "../../src/model/observed-state.js";
import { formatProblem } from "../../src/model/problem.js";
import { fleetView } from "../../src/observe/fleet-view.js";
import { formatStatus } from "../../src/observe/format-status.js";
import { planChange } from "../../src/plan/plan.js";
import { locateInTree } from "../../src/plan/replicas-under-autoscalers.js";
import { formatRenderError } from "../../src/render/format-render.js";
import { renderFleet } from "../../src/render/render-fleet.js";
import type { RenderResult } from "../../src/render/render-result.js";
import { clusterSetZone } from "../../src/render/service-discovery/cluster-set.js";
import { serviceViews } from "../../src/render/service-discovery/service-views.js";
import { appStatusPath, appStatusText } from "../../src/status/status-files.js";
import { pruneSettings } from "../../src/sync/desired-objects.js";
import { planPrune } from "../../src/sync/prune-plan.js";
import { minimalFleetWith, webDeployment } from "../helpers/minimal-fleet.js";
import {
  discoveryFleetYaml,
  NORTH_CLUSTER,
  observed,
  serviceFleet,
  WEB_EXPORT,
  WEB_SERVICE,
  WEB_SERVICE_EXPORT,
  webSliceFrom,
  weightedPlacement,
} from "../helpers/service-fleet.js";

const T0 = Date.parse("2026-12-04T12:00:00Z");
const CLUSTERS = ["east", "north", "west"];

function where(render: RenderResult, prefix: string): string[] {
  return render.objects.filter((o) => o.identity.startsWith(prefix)).map((o) => `${o.cluster} ${o.identity}`);
}

function records(render: RenderResult): { cluster: string; targets: string[]; weight: number }[] {
  const endpoint = render.objects.find((o) => o.identity.startsWith("externaldns.k8s.io/DNSEndpoint/"));
  return asList(asMap(endpoint?.object.spec).endpoints).map((e) => {
    const m = asMap(e);
    return {
      cluster: String(m.setIdentifier),
      targets: asList(m.targets).map(String),
      weight: Number(asMap(asList(m.providerSpecific)[0]).value),
    };
  });
}

function replicasOf(render: RenderResult): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const o of render.objects)
    if (o.identity === "apps/Deployment/shop/web") counts[o.cluster] = Number(asMap(o.object.spec).replicas);
  return counts;
}

// What consumers may rely on: nothing points at a NotReady cluster, no import without an export,
// and each DNS record's weight is the replicas its cluster runs.
function expectConsumersSafe(render: RenderResult, down: readonly string[], mode: string): void {
  for (const view of serviceViews(render.objects)) {
    expect(view.record?.clusters.filter((c) => down.includes(c)) ?? []).toEqual([]);
    expect(view.endpoints?.filter((c) => down.includes(c)) ?? []).toEqual([]);
    if (view.importedIn.length > 0) expect(view.exportedFrom.length).toBeGreaterThan(0);
  }
  const sources = render.objects
    .filter((o) => o.identity.includes("EndpointSlice"))
    .map((o) => asMap(asMap(o.object.metadata).labels)["multicluster.kubernetes.io/source-cluster"]);
  expect(sources.filter((c) => down.includes(String(c)))).toEqual([]);
  const counts = replicasOf(render);
  for (const r of mode === "dns" ? records(render) : []) expect(r.weight).toBe(counts[r.cluster]);
}

describe("multi-cluster services in the render", () => {
  it.each([
    [
      "mcs",
      [
        "east multicluster.x-k8s.io/ServiceImport/shop/web",
        "north multicluster.x-k8s.io/ServiceImport/shop/web",
        "west multicluster.x-k8s.io/ServiceImport/shop/web",
      ],
      [],
      [],
    ],
    [
      "endpoints",
      [
        "east multicluster.x-k8s.io/ServiceImport/shop/web",
        "north multicluster.x-k8s.io/ServiceImport/shop/web",
        "west multicluster.x-k8s.io/ServiceImport/shop/web",
      ],
      CLUSTERS.flatMap((c) => CLUSTERS.map((s) => `${c} discovery.k8s.io/EndpointSlice/shop/web-${s}`)),
      [],
    ],
    ["dns", [], [], ["north externaldns.k8s.io/DNSEndpoint/gitfleet-dns/web-shop"]],
  ] as const)(
    "mode %s renders imports, slices and records where they belong",
    (mode, imports, slices, dns) => {
      const render = renderFleet(serviceFleet(mode), { observations: observed(T0) });
      expect(render.errors).toEqual([]);
      expect(where(render, "multicluster.x-k8s.io/ServiceExport/")).toEqual(
        CLUSTERS.map((c) => `${c} ${WEB_EXPORT}`),
      );
      expect(where(render, "multicluster.x-k8s.io/ServiceImport/")).toEqual(imports);
      expect(where(render, "discovery.k8s.io/EndpointSlice/").sort()).toEqual([...slices].sort());
      expect(where(render, "externaldns.k8s.io/DNSEndpoint/")).toEqual(dns);
      // Every member carries the cluster set's identity (KEP-2149).
      for (const cluster of CLUSTERS) {
        const property = render.objects.find(
          (o) =>
            o.cluster === cluster && o.identity === "about.k8s.io/ClusterProperty//cluster.clusterset.k8s.io",
        );
        expect(asMap(property?.object.spec).value).toBe(cluster);
      }
    },
  );

  it.each([
    [1, ["east"]],
    [2, ["east", "north"]],
    [3, CLUSTERS],
  ])(
    "with %i replicas over three clusters the export goes only where a replica runs",
    (replicas, exported) => {
      const render = renderFleet(serviceFleet("mcs", {}, replicas), { observations: observed(T0) });
      const running = Object.entries(replicasOf(render))
        .filter(([, n]) => n > 0)
        .map(([c]) => c)
        .sort();
      expect(running).toEqual(exported);
      expect(serviceViews(render.objects)[0]?.exportedFrom).toEqual(exported);
      // Consumers import it everywhere by default, producers included.
      expect(serviceViews(render.objects)[0]?.importedIn).toEqual(CLUSTERS);
    },
  );

  it("imports only where the Placement's imports select", () => {
    const model = serviceFleet("mcs", {
      "placements/web.yaml": weightedPlacement(
        { east: 1, west: 1, north: 1 },
        "  imports:\n    clusterAffinity:\n      labelSelector:\n        matchLabels:\n          env: staging\n",
      ),
    });
    const render = renderFleet(model, { observations: observed(T0) });
    expect(where(render, "multicluster.x-k8s.io/ServiceImport/")).toEqual([
      "north multicluster.x-k8s.io/ServiceImport/shop/web",
    ]);
  });

  it("gives a ServiceImport the Service's ports and ClusterSetIP or Headless", () => {
    const headless = WEB_SERVICE.replace("type: LoadBalancer", "clusterIP: None");
    const render = renderFleet(serviceFleet("mcs", { "apps/web/service.yaml": headless }), {
      observations: observed(T0),
    });
    const imported = render.objects.find((o) =>
      o.identity.startsWith("multicluster.x-k8s.io/ServiceImport/"),
    );
    expect(imported?.object.spec).toEqual({
      type: "Headless",
      ports: [{ name: "http", protocol: "TCP", port: 80 }],
    });
  });

  it("withdraws a NotReady cluster's records at once while its replicas stay (the traffic clock)", () => {
    const model = serviceFleet("dns");
    const healthy = renderFleet(model, { observations: observed(T0) });
    expect(records(healthy).map((r) => r.cluster)).toEqual(CLUSTERS);
    // west is NotReady (NoSchedule only): its replicas are frozen where they are, its record goes.
    const down = renderFleet(model, { previous: healthy, observations: observed(T0 + 30_000, ["west"]) });
    expect(replicasOf(down)).toEqual(replicasOf(healthy));
    expect(records(down).map((r) => r.cluster)).toEqual(["east", "north"]);
    // Ready again: the record comes back.
    const back = renderFleet(model, { previous: down, observations: observed(T0 + 60_000) });
    expect(records(back).map((r) => r.cluster)).toEqual(CLUSTERS);
  });

  it("marks a cluster's endpoints not ready when the app has no ready replica there, and drops them when it is NotReady", () => {
    const model = serviceFleet("endpoints");
    const none: ObservedReplicas = { desired: 2, ready: 0, unschedulable: 0 };
    const render = renderFleet(model, { observations: observed(T0, ["north"], { east: none }) });
    const slices = render.objects.filter((o) => o.cluster === "west" && o.identity.includes("EndpointSlice"));
    expect(slices.map((s) => [s.identity, asMap(asList(s.object.endpoints)[0]).conditions])).toEqual([
      ["discovery.k8s.io/EndpointSlice/shop/web-east", { ready: false }],
      ["discovery.k8s.io/EndpointSlice/shop/web-west", { ready: true }],
    ]);
    const zone = render.objects.find(
      (o) => o.cluster === "west" && o.identity.includes("gitfleet-clusterset-zone"),
    );
    expect(String(asMap(zone?.object.data)["db.clusterset.local"])).not.toContain("198.51.100.1");
  });

  it("renders no endpoint before the cluster's entry point is known", () => {
    const model = serviceFleet("endpoints");
    const render = renderFleet(model, { observations: { ...observed(T0), entryPoints: new Map() } });
    expect(where(render, "discovery.k8s.io/EndpointSlice/")).toEqual([]);
    expect(where(render, "multicluster.x-k8s.io/ServiceImport/")).toHaveLength(3);
  });

  it("holds, over random outages and readiness, to what consumers may rely on", () => {
    const model = serviceFleet("dns");
    const endpointsModel = serviceFleet("endpoints");
    const cluster = fc.constantFrom(...CLUSTERS);
    fc.assert(
      fc.property(
        fc.uniqueArray(cluster, { maxLength: 3 }),
        fc.uniqueArray(cluster, { maxLength: 3 }),
        fc.integer({ min: 0, max: 12 }),
        (down, unready, replicas) => {
          const web = Object.fromEntries(unready.map((c) => [c, { desired: 1, ready: 0, unschedulable: 0 }]));
          for (const [m, mode] of [
            [model, "dns"],
            [endpointsModel, "endpoints"],
          ] as const) {
            const sized = replicas === 6 ? m : serviceFleet(mode, {}, replicas);
            const healthy = renderFleet(sized, { observations: observed(T0) });
            const render = renderFleet(sized, {
              previous: healthy,
              observations: observed(T0 + 1000, down, web),
            });
            expectConsumersSafe(render, down, mode);
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe("multi-cluster services in validation", () => {
  const cases: [string, Record<string, string | null>, string][] = [
    [
      "an export without serviceDiscovery",
      { "fleet.yaml": null },
      "apps/web/export.yaml:2:7: error: /kind: a ServiceExport needs fleet.yaml spec.serviceDiscovery",
    ],
    [
      "an export without its Service",
      { "apps/web/service.yaml": null },
      'apps/web/export.yaml:4:9: error: /metadata/name: no Service "web" in namespace shop in app web',
    ],
    [
      "an ExternalName Service",
      {
        "apps/web/service.yaml":
          "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  type: ExternalName\n  externalName: web.example.com\n",
      },
      "apps/web/service.yaml:6:9: error: /spec/type: Service shop/web is exported (apps/web/export.yaml) but an ExternalName Service cannot be",
    ],
    [
      "a ClusterIP Service in the endpoints mode",
      { "apps/web/service.yaml": WEB_SERVICE.replace("type: LoadBalancer", "type: ClusterIP") },
      "apps/web/service.yaml:6:9: error: /spec/type: Service shop/web is exported in serviceDiscovery mode endpoints, which needs each cluster's entry point",
    ],
    [
      "the dns mode without its settings",
      { "fleet.yaml": discoveryFleetYaml("mcs").replace("mode: mcs", "mode: dns") },
      "fleet.yaml:8:11: error: /spec/serviceDiscovery/mode: mode dns needs spec.serviceDiscovery.dns",
    ],
    [
      "a DNS cluster that does not exist",
      { "fleet.yaml": discoveryFleetYaml("dns").replace("cluster: north", "cluster: south") },
      'fleet.yaml:10:16: error: /spec/serviceDiscovery/dns/cluster: no Cluster "south" under clusters/',
    ],
    [
      "a gateway no app writes",
      {
        "fleet.yaml": discoveryFleetYaml(
          "endpoints",
          "    gateway:\n      namespace: istio-system\n      name: eastwest\n",
        ),
      },
      "fleet.yaml:11:13: error: /spec/serviceDiscovery/gateway/name: no app writes Service istio-system/eastwest",
    ],
  ];

  it.each(cases)("reports %s where it is written", (_, files, expected) => {
    const loaded = loadFleet(
      minimalFleetWith({
        "fleet.yaml": discoveryFleetYaml("endpoints"),
        "clusters/north.yaml": NORTH_CLUSTER,
        "apps/web/service.yaml": WEB_SERVICE,
        "apps/web/export.yaml": WEB_SERVICE_EXPORT,
        ...files,
      }),
    );
    const errors = loaded.problems.filter((p) => p.severity === "error").map(formatProblem);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(expected);
    expect(loaded.model).toBeUndefined();
  });

  it("accepts the same fleet as written", () => {
    const loaded = loadFleet(
      minimalFleetWith({
        "fleet.yaml": discoveryFleetYaml("endpoints"),
        "apps/web/service.yaml": WEB_SERVICE,
        "apps/web/export.yaml": WEB_SERVICE_EXPORT,
      }),
    );
    expect(loaded.problems.filter((p) => p.severity === "error")).toEqual([]);
  });

  it("finds ports that an Override makes disagree across exporting clusters, at the Service's ports", () => {
    const override = `apiVersion: gitfleet.io/v1alpha1
kind: Override
metadata:
  name: west-port
spec:
  resourceSelectors:
    - {apiVersion: v1, kind: Service, name: web}
  overrideRules:
    - targetCluster: {clusterNames: [west]}
      overriders:
        jsonPatch:
          - {op: replace, path: /spec/ports/0/port, value: 8080}
`;
    const tree = minimalFleetWith({
      "fleet.yaml": discoveryFleetYaml("mcs"),
      "clusters/north.yaml": NORTH_CLUSTER,
      "apps/web/deployment.yaml": webDeployment(6),
      "apps/web/service.yaml": WEB_SERVICE,
      "apps/web/export.yaml": WEB_SERVICE_EXPORT,
      "placements/web.yaml": weightedPlacement({ east: 1, west: 1, north: 1 }),
      "overrides/west-port.yaml": override,
    });
    const loaded = loadFleet(tree);
    if (!loaded.model) throw new Error(loaded.problems.map(formatProblem).join("\n"));
    const render = renderFleet(loaded.model, { observations: observed(T0) });
    expect(
      render.errors.map((e) => formatRenderError(e, (at) => locateInTree(tree, at.origin, at.path))),
    ).toEqual([
      "apps/web/service.yaml:10:5: cluster west: Service shop/web: the clusters it is exported from disagree after Overrides, which the MCS API reports as a Conflict: east has TCP 80 (http); ClusterSetIP, LoadBalancer; west has TCP 8080 (http); ClusterSetIP, LoadBalancer. Make the ports, protocols and type agree, or export it from fewer clusters [SERVICE_CONFLICT]",
    ]);
    expect(where(render, "multicluster.x-k8s.io/ServiceImport/")).toEqual([]);
  });
});

describe("the clusterset.local zone", () => {
  it("answers each service's name, each cluster's name and an SRV record per named port and cluster", () => {
    const slice = (cluster: string, address: string, ready: boolean, weight: number) =>
      webSliceFrom(cluster, [address], weight, ready);
    const zone = clusterSetZone(
      [
        slice("west", "198.51.100.2", true, 4),
        slice("east", "198.51.100.1", true, 2),
        slice("north", "198.51.100.3", false, 1),
      ],
      5,
    );
    const [origin, soa, ...rest] = zone.split("\n");
    expect(origin).toBe("$ORIGIN clusterset.local.");
    expect(soa).toMatch(
      /^@ 5 IN SOA ns\.dns\.clusterset\.local\. hostmaster\.clusterset\.local\. \d+ 7200 1800 86400 5$/,
    );
    expect(rest).toEqual([
      "@ 5 IN NS ns.dns.clusterset.local.",
      'dns-version 5 IN TXT "1.1.0"',
      "web.shop.svc 5 IN A 198.51.100.1",
      "east.web.shop.svc 5 IN A 198.51.100.1",
      "_http._tcp.web.shop.svc 5 IN SRV 0 2 80 east.web.shop.svc.clusterset.local.",
      "web.shop.svc 5 IN A 198.51.100.2",
      "west.web.shop.svc 5 IN A 198.51.100.2",
      "_http._tcp.web.shop.svc 5 IN SRV 0 4 80 west.web.shop.svc.clusterset.local.",
      "",
    ]);
    // The serial follows the records: CoreDNS reloads the zone when it changes.
    const other = clusterSetZone([slice("east", "198.51.100.1", true, 2)], 5);
    expect(other.split("\n")[1]).not.toBe(soa);
  });
});

describe("multi-cluster services in the plan", () => {
  it("says where a service is exported, imported and published, and what a change withdraws", () => {
    const model = serviceFleet("dns");
    const base = renderFleet(model, { observations: observed(T0) });
    const head = renderFleet(model, { previous: base, observations: observed(T0 + 1000, ["west"]) });
    expect(planChange(base, head).services).toEqual([
      "web.shop exported from east, north, west; imported in 0 clusters; DNS web.shop.example.com: east, north (−west)",
    ]);
    const first = planChange({ objects: [], decisions: [], errors: [] }, base).services;
    expect(first).toEqual([
      "web.shop exported from east, north, west; imported in 0 clusters; DNS web.shop.example.com: east, north, west",
    ]);
  });
});

describe("multi-cluster services and the deletion budget", () => {
  const entry = (identity: string, app: string) => {
    const [group, kind, namespace, name] = identity.split("/") as [string, string, string, string];
    return {
      identity,
      apiVersion: group ? `${group}/v1` : "v1",
      kind,
      namespace: namespace || undefined,
      name,
      app,
      uid: `uid-${name}`,
      digest: "d",
    };
  };
  const inventory = (leaving: string) =>
    new Map(
      [
        entry("apps/Deployment/shop/web", "web"),
        entry("/Service/shop/web", "web"),
        entry(leaving, "web"),
      ].map((e) => [e.identity, e]),
    );
  const desired = new Set(["apps/Deployment/shop/web", "/Service/shop/web"]);

  it.each([
    [
      "a NotReady producer's EndpointSlice (the traffic clock)",
      "discovery.k8s.io/EndpointSlice/shop/web-west",
      false,
    ],
    ["any other EndpointSlice", "discovery.k8s.io/EndpointSlice/shop/web-elsewhere", true],
    ["a ConfigMap", "/ConfigMap/shop/web-config", true],
  ])("withdrawing %s as 1 of 3 objects past a 30%% budget is blocked: %s", (_, leaving, blocked) => {
    const settings = pruneSettings(serviceFleet("endpoints"));
    const plan = planPrune("east", inventory(leaving), desired, settings);
    expect(plan.blocked !== undefined).toBe(blocked);
    expect(plan.delete.map((e) => e.identity)).toEqual(blocked ? [] : [leaving]);
  });
});

describe("multi-cluster services in the metrics", () => {
  it("says per service and producing cluster whether traffic goes there", async () => {
    const model = serviceFleet("dns");
    const render = renderFleet(model, { observations: observed(T0, ["west"]) });
    const previous = renderFleet(model, { observations: observed(T0) });
    const down = renderFleet(model, { previous, observations: observed(T0 + 1000, ["west"]) });
    expect(serviceViews(render.objects)[0]?.exportedFrom).toEqual(["east", "north"]);
    const metrics = new FleetMetrics(() => ({
      ready: true,
      leading: true,
      clusters: new Map(),
      synced: new Map(),
      decisions: [],
      services: serviceViews(down.objects),
    }));
    const text = await metrics.registry.metrics();
    const lines = text.split("\n").filter((l) => l.startsWith("gitfleet_service_endpoints{"));
    expect(lines.sort()).toEqual([
      'gitfleet_service_endpoints{service="web.shop",cluster="east"} 1',
      'gitfleet_service_endpoints{service="web.shop",cluster="north"} 1',
      'gitfleet_service_endpoints{service="web.shop",cluster="west"} 0',
    ]);
  });
});

describe("multi-cluster services in status/apps/", () => {
  it("lists where each exported service goes and where its traffic goes", () => {
    const model = serviceFleet("dns");
    const healthy = renderFleet(model, { observations: observed(T0) });
    const down = renderFleet(model, { previous: healthy, observations: observed(T0 + 1000, ["west"]) });
    const own = (render: RenderResult) => ({
      objects: render.objects.filter((o) => o.app === "web"),
      decisions: render.decisions.filter((d) => d.app === "web"),
      errors: [],
    });
    const status = asMap(parse(appStatusText("web", "c0ffee", own(down))));
    expect(status.services).toEqual([
      {
        service: "web.shop",
        exportedFrom: ["east", "north", "west"],
        importedIn: [],
        record: { name: "web.shop.example.com", clusters: ["east", "north"] },
      },
    ]);
  });
});

describe("multi-cluster services in gitfleet status", () => {
  it("prints each exported service's line from status/apps/", () => {
    const model = serviceFleet("dns");
    const healthy = renderFleet(model, { observations: observed(T0) });
    const down = renderFleet(model, { previous: healthy, observations: observed(T0 + 1000, ["west"]) });
    const output = {
      objects: down.objects.filter((o) => o.app === "web"),
      decisions: down.decisions.filter((d) => d.app === "web"),
      errors: [],
    };
    const files = new Map([[appStatusPath("web"), appStatusText("web", "c0ffee", output)]]);
    const text = formatStatus(fleetView(files, []));
    expect(text).toContain(
      "Services:\n  web.shop exported from east, north, west; imported in 0 clusters; DNS web.shop.example.com: east, north\n",
    );
  });
});
