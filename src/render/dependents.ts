import { asList, asMap, type Json } from "../apimachinery/json.js";

/** The objects a pod spec refers to, which follow its workload to every cluster it runs in. */
export interface PodReferences {
  readonly configMaps: readonly string[];
  readonly secrets: readonly string[];
  readonly persistentVolumeClaims: readonly string[];
  readonly serviceAccounts: readonly string[];
}

/**
 * Finds what a pod spec references, as Karmada's dependency interpreter and KubeAdmiral's followers
 * do: ConfigMaps and Secrets from volumes (including projected sources), env, envFrom and image pull
 * secrets of every container kind; PVCs from volumes; and the ServiceAccount unless it is "default".
 * Names come back sorted and without duplicates.
 */
export function findPodReferences(podSpec: Json | undefined): PodReferences {
  const configMaps = new Set<string>();
  const secrets = new Set<string>();
  const claims = new Set<string>();
  const spec = asMap(podSpec);
  for (const volume of asList(spec.volumes)) {
    const v = asMap(volume);
    addName(configMaps, asMap(v.configMap).name);
    addName(secrets, asMap(v.secret).secretName);
    addName(claims, asMap(v.persistentVolumeClaim).claimName);
    for (const source of asList(asMap(v.projected).sources)) {
      addName(configMaps, asMap(asMap(source).configMap).name);
      addName(secrets, asMap(asMap(source).secret).name);
    }
  }
  for (const container of ["containers", "initContainers", "ephemeralContainers"].flatMap((field) =>
    asList(spec[field]),
  )) {
    const c = asMap(container);
    for (const env of asList(c.env)) {
      const from = asMap(asMap(env).valueFrom);
      addName(configMaps, asMap(from.configMapKeyRef).name);
      addName(secrets, asMap(from.secretKeyRef).name);
    }
    for (const envFrom of asList(c.envFrom)) {
      addName(configMaps, asMap(asMap(envFrom).configMapRef).name);
      addName(secrets, asMap(asMap(envFrom).secretRef).name);
    }
  }
  for (const pullSecret of asList(spec.imagePullSecrets)) addName(secrets, asMap(pullSecret).name);
  const account = spec.serviceAccountName ?? spec.serviceAccount;
  const serviceAccounts =
    typeof account === "string" && account !== "" && account !== "default" ? [account] : [];
  return {
    configMaps: sorted(configMaps),
    secrets: sorted(secrets),
    persistentVolumeClaims: sorted(claims),
    serviceAccounts,
  };
}

function addName(names: Set<string>, name: Json | undefined): void {
  if (typeof name === "string" && name !== "") names.add(name);
}

function sorted(names: Set<string>): string[] {
  return [...names].sort();
}
