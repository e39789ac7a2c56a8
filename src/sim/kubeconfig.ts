import * as k8s from "@kubernetes/client-node";
import { emitYaml } from "../render/yaml-emitter.js";

/**
 * A kubeconfig with one context per simulated member, named after its cluster (the name gitfleet
 * looks up by default), pointing at its loopback URL. No credentials: the members need none. The
 * members speak plain HTTP on 127.0.0.1, which @kubernetes/client-node accepts only with
 * `insecure-skip-tls-verify` set (kubectl ignores it for http).
 */
export function simulatedKubeconfig(
  members: readonly { readonly name: string; readonly url: string }[],
): string {
  return emitYaml({
    apiVersion: "v1",
    kind: "Config",
    preferences: {},
    clusters: members.map((m) => ({
      name: m.name,
      cluster: { server: m.url, "insecure-skip-tls-verify": true },
    })),
    users: [{ name: "gitfleet-simulator", user: {} }],
    contexts: members.map((m) => ({
      name: m.name,
      context: { cluster: m.name, user: "gitfleet-simulator" },
    })),
    "current-context": members[0]?.name ?? "",
  });
}

/** A client-node configuration for one simulated member, read from the kubeconfig gitfleet writes for it. */
export function memberClientConfig(member: { readonly name: string; readonly url: string }): k8s.KubeConfig {
  const config = new k8s.KubeConfig();
  config.loadFromString(simulatedKubeconfig([member]));
  return config;
}
