import { emitYaml } from "../render/yaml-emitter.js";

/**
 * A kubeconfig with one context per simulated member, named after its cluster (the name gitfleet
 * looks up by default), pointing at its loopback URL. No credentials: the members need none.
 */
export function simulatedKubeconfig(
  members: readonly { readonly name: string; readonly url: string }[],
): string {
  return emitYaml({
    apiVersion: "v1",
    kind: "Config",
    preferences: {},
    clusters: members.map((m) => ({ name: m.name, cluster: { server: m.url } })),
    users: [{ name: "gitfleet-simulator", user: {} }],
    contexts: members.map((m) => ({
      name: m.name,
      context: { cluster: m.name, user: "gitfleet-simulator" },
    })),
    "current-context": members[0]?.name ?? "",
  });
}
