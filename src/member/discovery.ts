import type { ApiResource } from "./api-resources.js";

/** The Kubernetes version a simulated member reports. */
export const SIMULATED_VERSION = { major: "1", minor: "32", gitVersion: "v1.32.0-gitfleet-sim" } as const;

/** GET /version */
export function versionBody(): Record<string, unknown> {
  return {
    ...SIMULATED_VERSION,
    gitCommit: "0000000000000000000000000000000000000000",
    gitTreeState: "clean",
    buildDate: "2026-01-01T00:00:00Z",
    goVersion: "go1.23",
    compiler: "gc",
    platform: "linux/amd64",
  };
}

/** GET /api */
export function coreVersionsBody(serverAddress: string): Record<string, unknown> {
  return {
    kind: "APIVersions",
    versions: ["v1"],
    serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress }],
  };
}

/** GET /apis: every group but the core one, each with its versions. */
export function groupListBody(resources: readonly ApiResource[]): Record<string, unknown> {
  const versions = new Map<string, Set<string>>();
  for (const resource of resources) {
    if (resource.group === "") continue;
    const set = versions.get(resource.group) ?? new Set<string>();
    set.add(resource.version);
    versions.set(resource.group, set);
  }
  const groups = [...versions].map(([name, set]) => {
    const list = [...set].map((version) => ({ groupVersion: `${name}/${version}`, version }));
    return { name, versions: list, preferredVersion: list[0] };
  });
  return { kind: "APIGroupList", apiVersion: "v1", groups };
}

/** GET /apis/<group> */
export function groupBody(
  resources: readonly ApiResource[],
  group: string,
): Record<string, unknown> | undefined {
  const found = (groupListBody(resources).groups as { name: string }[]).find((g) => g.name === group);
  return found ? { kind: "APIGroup", apiVersion: "v1", ...found } : undefined;
}

/** GET /api/v1 or /apis/<group>/<version>: the resources and their subresources, as discovery lists them. */
export function resourceListBody(
  resources: readonly ApiResource[],
  group: string,
  version: string,
): Record<string, unknown> | undefined {
  const served = resources.filter((r) => r.group === group && r.version === version);
  if (served.length === 0) return undefined;
  const entries: Record<string, unknown>[] = [];
  for (const resource of served) {
    entries.push({
      name: resource.name,
      singularName: resource.singularName,
      namespaced: resource.namespaced,
      kind: resource.kind,
      verbs: resource.verbs,
      ...(resource.shortNames ? { shortNames: resource.shortNames } : {}),
    });
    for (const sub of resource.subresources ?? []) {
      entries.push({
        name: `${resource.name}/${sub}`,
        singularName: "",
        namespaced: resource.namespaced,
        ...(sub === "scale"
          ? { group: "autoscaling", version: "v1", kind: "Scale" }
          : { kind: resource.kind }),
        verbs: ["get", "patch", "update"],
      });
    }
  }
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: group ? `${group}/${version}` : version,
    resources: entries,
  };
}
