import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { asList, asMap, type JsonMap } from "../../../src/apimachinery/json.js";
import type { MemberClient } from "../../../src/kube/member-client.js";

/** A Secret volume written for a pod: where, and from which Secrets (or which of their keys). */
export interface SecretVolume {
  readonly namespace: string;
  readonly sources: readonly JsonMap[];
  readonly target: string;
}

/** A pod's volumes on disk: its directories by mount path, and the Secret volumes among them. */
export interface PodMounts {
  readonly mounts: Map<string, string>;
  readonly secretVolumes: SecretVolume[];
}

/**
 * What the process runtime's pods read from the host, as the kubelet and a storage provisioner give
 * it: Secret volumes (plain and projected) written under the pod's directory and kept up to date with
 * their Secrets, a hostPath PersistentVolume for each pending claim, and env from ConfigMap keys.
 */
export class PodVolumes {
  constructor(
    private readonly client: MemberClient,
    private readonly dir: string,
  ) {}

  /** A provisioner: each pending claim gets a hostPath volume bound to it. */
  async provision(): Promise<void> {
    const claims = asList(asMap(await this.client.raw("GET", "/api/v1/persistentvolumeclaims")).items).map(
      (c) => asMap(c),
    );
    for (const claim of claims) {
      const metadata = asMap(claim.metadata);
      if (asMap(claim.status).phase !== "Pending" || asMap(claim.spec).volumeName) continue;
      // Named by the claim's uid too: a claim deleted and made again under its name gets a new volume.
      const name = `pv-${String(metadata.namespace)}-${String(metadata.name)}`
        .slice(0, 240)
        .concat(`-${String(metadata.uid).slice(0, 8)}`);
      const path = join(this.dir, "volumes", name);
      mkdirSync(path, { recursive: true });
      await this.client
        .raw("POST", "/api/v1/persistentvolumes", {
          apiVersion: "v1",
          kind: "PersistentVolume",
          metadata: { name },
          spec: {
            capacity: {
              storage: String(asMap(asMap(asMap(claim.spec).resources).requests).storage ?? "1Gi"),
            },
            accessModes: asList(asMap(claim.spec).accessModes),
            persistentVolumeReclaimPolicy: "Retain",
            storageClassName: String(asMap(claim.spec).storageClassName ?? ""),
            hostPath: { path },
            claimRef: { namespace: metadata.namespace, name: metadata.name, uid: metadata.uid },
          },
        })
        .catch(() => undefined);
    }
  }

  /** The pod's volumes on disk, by mount path, and its Secret volumes; undefined while a Secret is missing. */
  async mountsOf(pod: JsonMap, step = 0): Promise<PodMounts | undefined> {
    const metadata = asMap(pod.metadata);
    const namespace = String(metadata.namespace);
    const root = join(this.dir, "pods", String(metadata.uid));
    const byVolume = new Map<string, string>();
    const secretVolumes: SecretVolume[] = [];
    for (const volume of asList(asMap(pod.spec).volumes).map((v) => asMap(v))) {
      const name = String(volume.name);
      if (volume.persistentVolumeClaim) {
        const claim = String(asMap(volume.persistentVolumeClaim).claimName);
        byVolume.set(name, await this.claimPath(namespace, claim));
      } else {
        const target = join(root, name);
        const sources = secretSources(volume);
        if (!(await this.writeSecrets(namespace, sources, target))) return undefined;
        byVolume.set(name, target);
        secretVolumes.push({ namespace, sources, target });
      }
    }
    const container = containerAt(pod, step);
    const mounts = new Map<string, string>();
    for (const mount of asList(container.volumeMounts).map((m) => asMap(m))) {
      const source = byVolume.get(String(mount.name));
      if (source) mounts.set(String(mount.mountPath), source);
    }
    return { mounts, secretVolumes };
  }

  /**
   * As the kubelet does (within its sync period), a running pod's Secret volume follows its Secrets:
   * a changed key is rewritten in place — a new file renamed over the old — so a process that reads
   * its certificate files again sees the renewed ones without a restart.
   */
  async refresh(volume: SecretVolume): Promise<void> {
    await this.writeSecretFiles(volume.namespace, volume.sources, volume.target, true);
  }

  /**
   * The container's variables from ConfigMap keys, read when it starts as the kubelet reads them; an
   * optional key that is not there leaves its variable unset.
   */
  async configMapEnv(pod: JsonMap, step = 0): Promise<Record<string, string>> {
    const namespace = String(asMap(pod.metadata).namespace);
    const env: Record<string, string> = {};
    for (const entry of asList(containerAt(pod, step).env).map((e) => asMap(e))) {
      const ref = asMap(asMap(entry.valueFrom).configMapKeyRef);
      if (typeof ref.name !== "string") continue;
      const configMap = await this.client
        .raw("GET", `/api/v1/namespaces/${namespace}/configmaps/${ref.name}`)
        .catch(() => undefined);
      const value = asMap(asMap(configMap).data)[String(ref.key)];
      if (typeof value === "string") env[String(entry.name)] = value;
    }
    return env;
  }

  // Writes the Secrets' keys (or the listed items) as files under a fresh `target`; false while one is missing.
  private async writeSecrets(
    namespace: string,
    sources: readonly JsonMap[],
    target: string,
  ): Promise<boolean> {
    rmSync(target, { recursive: true, force: true });
    mkdirSync(target, { recursive: true });
    return this.writeSecretFiles(namespace, sources, target, false);
  }

  // The Secrets' files under `target`; `inPlace`: only changed files, each written beside and renamed
  // over the old one (the directory stays the one bound into the pod).
  private async writeSecretFiles(
    namespace: string,
    sources: readonly JsonMap[],
    target: string,
    inPlace: boolean,
  ): Promise<boolean> {
    for (const source of sources) {
      const secret = await this.client
        .raw("GET", `/api/v1/namespaces/${namespace}/secrets/${String(source.name)}`)
        .catch(() => undefined);
      const data = asMap(asMap(secret).data);
      const items = asList(source.items).map((i) => asMap(i));
      const files =
        items.length > 0
          ? items.map((i) => [String(i.key), String(i.path)])
          : Object.keys(data).map((k) => [k, k]);
      for (const [key, path] of files) {
        const value = data[key as string];
        if (typeof value !== "string") return false;
        const file = join(target, path as string);
        const content = Buffer.from(value, "base64");
        mkdirSync(dirname(file), { recursive: true });
        if (!inPlace) writeFileSync(file, content, { mode: 0o600 });
        else if (!existsSync(file) || !readFileSync(file).equals(content)) {
          writeFileSync(`${file}.new`, content, { mode: 0o600 });
          renameSync(`${file}.new`, file);
        }
      }
    }
    return true;
  }

  // A claim's directory: its bound hostPath volume's.
  private async claimPath(namespace: string, claim: string): Promise<string> {
    const pvc = asMap(
      await this.client.raw("GET", `/api/v1/namespaces/${namespace}/persistentvolumeclaims/${claim}`),
    );
    const volume = String(asMap(pvc.spec).volumeName ?? "");
    const pv = asMap(await this.client.raw("GET", `/api/v1/persistentvolumes/${volume}`));
    return String(asMap(asMap(pv.spec).hostPath).path);
  }
}

// The Secrets a volume mounts: a projected volume's sources, or a secret volume's one.
function secretSources(volume: JsonMap): JsonMap[] {
  if (volume.projected) return asList(asMap(volume.projected).sources).map((s) => asMap(asMap(s).secret));
  if (volume.secret)
    return [{ name: asMap(volume.secret).secretName ?? null, items: asMap(volume.secret).items ?? null }];
  return [];
}

/**
 * The containers a pod runs, in order: its init containers, each to completion, then its (first)
 * container. `step` counts through them.
 */
export function containerAt(pod: JsonMap, step: number): JsonMap {
  const spec = asMap(pod.spec);
  return asMap([...asList(spec.initContainers), asList(spec.containers)[0]][step]);
}

/** How many containers a pod runs one after another: its init containers and its container. */
export function stepsOf(pod: JsonMap): number {
  return asList(asMap(pod.spec).initContainers).length + 1;
}
