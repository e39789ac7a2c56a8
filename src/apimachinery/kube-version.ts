/**
 * Kubernetes and etcd release versions as control-plane images are tagged: "v1.32.3" for Kubernetes
 * (an optional pre-release such as "-rc.1"), "3.5.16-0" for registry.k8s.io/etcd (the etcd release
 * and the image's revision).
 */
export interface KubeVersion {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  /** "rc.1" in v1.33.0-rc.1; "" for a release. */
  readonly pre: string;
}

const KUBE_VERSION = /^v([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})(?:-([0-9A-Za-z.-]{1,40}))?$/;
const ETCD_VERSION = /^([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})(?:-([0-9]{1,3}))?$/;

/** Parses "v1.32.3" (or "v1.33.0-rc.1"); undefined when it is not a Kubernetes release version. */
export function parseKubeVersion(text: string): KubeVersion | undefined {
  const match = KUBE_VERSION.exec(text);
  if (!match) return undefined;
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]), pre: match[4] ?? "" };
}

/**
 * Parses what a member's /version reports as gitVersion ("v1.32.3", "v1.31.4-eks-2f2a3b1",
 * "v1.30.2+k3s1"): build metadata after "+" is dropped, and a suffix that is not alpha, beta or rc
 * is a vendor's build of that release, not a pre-release; undefined when it is not a version.
 */
export function parseGitVersion(text: string): KubeVersion | undefined {
  const version = parseKubeVersion(text.split("+")[0] ?? "");
  if (!version || PRE_RELEASE.test(version.pre)) return version;
  return { ...version, pre: "" };
}

const PRE_RELEASE = /^(alpha|beta|rc)(\.[0-9]+)*$/;

/** Parses an etcd image tag such as "3.5.16-0" (the revision after "-" is the image's, not etcd's). */
export function parseEtcdVersion(text: string): KubeVersion | undefined {
  const match = ETCD_VERSION.exec(text);
  if (!match) return undefined;
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]), pre: "" };
}

/** Why a Kubernetes version is not usable for a control plane, or undefined when it is. */
export function explainInvalidKubeVersion(text: string): string | undefined {
  const version = parseKubeVersion(text);
  if (!version) return `"${text}" is not a Kubernetes version; write it as the release tag, like v1.32.3`;
  if (version.major !== 1) return `"${text}": only Kubernetes 1.x exists`;
  return undefined;
}

/** Why an etcd image tag is not a version, or undefined when it is. */
export function explainInvalidEtcdVersion(text: string): string | undefined {
  return parseEtcdVersion(text)
    ? undefined
    : `"${text}" is not an etcd image tag; write it as registry.k8s.io/etcd tags it, like 3.5.16-0`;
}

/**
 * Orders versions as releases are ordered: by major, minor, patch; a pre-release before its release,
 * pre-releases by their dotted parts (numbers numerically).
 */
export function compareVersions(a: KubeVersion, b: KubeVersion): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch || comparePre(a.pre, b.pre);
}

function comparePre(a: string, b: string): number {
  if (a === b) return 0;
  if (a === "") return 1;
  if (b === "") return -1;
  const left = a.split(".");
  const right = b.split(".");
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    const x = left[i];
    const y = right[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    const order = comparePart(x, y);
    if (order !== 0) return order;
  }
  return 0;
}

function comparePart(x: string, y: string): number {
  const numeric = /^[0-9]+$/;
  if (numeric.test(x) && numeric.test(y)) return Number(x) - Number(y);
  if (numeric.test(x)) return -1;
  if (numeric.test(y)) return 1;
  return x < y ? -1 : x > y ? 1 : 0;
}

/** How many minors `newer` is ahead of `older` (negative when it is behind); majors count as 100 minors. */
export function minorDistance(older: KubeVersion, newer: KubeVersion): number {
  return (newer.major - older.major) * 100 + (newer.minor - older.minor);
}

/**
 * Kubernetes' version-skew policy for a component that talks to kube-apiserver
 * (kube-controller-manager, kube-scheduler): never newer than the API server, at most one minor older.
 * Returns why `component` may not run against `apiServer`, or undefined when it may.
 */
export function explainSkew(component: KubeVersion, apiServer: KubeVersion): string | undefined {
  if (compareVersions(component, apiServer) > 0)
    return `it would be newer than kube-apiserver ${format(apiServer)}; a component is never newer than the API server`;
  if (minorDistance(component, apiServer) > 1)
    return `it would be ${minorDistance(component, apiServer)} minors older than kube-apiserver ${format(apiServer)}; at most one minor older is supported`;
  return undefined;
}

/** How many minors older than kube-apiserver a kubelet may be (Kubernetes' skew policy since v1.28). */
export const KUBELET_MAX_MINORS_BEHIND = 3;

/**
 * Kubernetes' version-skew policy for a kubelet: never newer than kube-apiserver, at most three
 * minors older. Returns why `kubelet` may not run against `apiServer`, or undefined when it may.
 */
export function explainKubeletSkew(kubelet: KubeVersion, apiServer: KubeVersion): string | undefined {
  if (compareVersions(kubelet, apiServer) > 0)
    return `it would be newer than kube-apiserver ${format(apiServer)}; a kubelet is never newer than the API server`;
  const behind = minorDistance(kubelet, apiServer);
  if (behind > KUBELET_MAX_MINORS_BEHIND)
    return `it would be ${behind} minors older than kube-apiserver ${format(apiServer)}; a kubelet may be at most ${KUBELET_MAX_MINORS_BEHIND} minors older`;
  return undefined;
}

/** "v1.32.3". */
export function format(version: KubeVersion): string {
  return `v${version.major}.${version.minor}.${version.patch}${version.pre ? `-${version.pre}` : ""}`;
}
