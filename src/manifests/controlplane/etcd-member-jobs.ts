import type { JsonMap } from "../../apimachinery/json.js";
import type { HostedControlPlane } from "../../model/controlplane/hosted-control-plane.js";
import { etcdClientUrls, etcdMemberUrl } from "./endpoints.js";
import { ETCDCTL_TLS, PKI_DIR, PKI_SECRETS, pkiVolume } from "./pki-layout.js";
import { type ContainerSpec, imageOf, jobPodTemplate } from "./pod-template.js";

/** The label of a member replacement's Jobs: the member replaced. */
export const ETCD_REPLACEMENT_LABEL = "gitfleet.io/etcd-replacement";
/** The label of the step a replacement Job runs: remove or add. */
export const ETCD_REPLACEMENT_STEP_LABEL = "gitfleet.io/etcd-replacement-step";
/** The annotation of a replacement Job naming the member ID replaced. */
export const ETCD_MEMBER_ID_ANNOTATION = "gitfleet.io/etcd-member-id";
/** The annotation of the add Job naming the member's pod deleted with its volume. */
export const WIPED_POD_ANNOTATION = "gitfleet.io/etcd-wiped-pod";
/** The annotation of a replacement Job naming the EtcdMemberReplacement that asked for it. */
export const REPLACEMENT_REQUEST_ANNOTATION = "gitfleet.io/etcd-replacement-request";

export type ReplacementStep = "move-leader" | "remove" | "add";

/**
 * A Job of a member replacement, run once (its pod retried twice): `etcdctl move-leader <to>` (the
 * member leads the etcd; `to` is the member ID leadership goes to), `etcdctl member remove <id>`, or
 * `etcdctl member add <member> --peer-urls=<its peer URL>`, against the members named in `endpoints`,
 * with the etcd's client certificate. Named by step, ordinal and member ID, so each step of one
 * replacement is one Job however many passes ask for it; annotated with the EtcdMemberReplacement
 * that asked for it, if one did.
 */
export function etcdMemberJob(
  plane: HostedControlPlane,
  step: ReplacementStep,
  member: string,
  id: string,
  endpoints: readonly string[],
  request?: string,
  to?: string,
): JsonMap {
  const { etcd } = plane;
  const labels = {
    "app.kubernetes.io/component": "etcd-replacement",
    [ETCD_REPLACEMENT_LABEL]: member,
    [ETCD_REPLACEMENT_STEP_LABEL]: step,
  };
  const command =
    step === "move-leader"
      ? ["move-leader", to ?? ""]
      : step === "remove"
        ? ["member", "remove", id]
        : ["member", "add", member, `--peer-urls=${etcdMemberUrl(etcd, member, "peer")}`];
  const job = etcdctlJob(plane, replacementJobName(member, step, id), labels, step, endpoints, command);
  const metadata = job.metadata as JsonMap;
  metadata.annotations = {
    [ETCD_MEMBER_ID_ANNOTATION]: id,
    ...(request ? { [REPLACEMENT_REQUEST_ANNOTATION]: request } : {}),
  };
  return job;
}

/** The label of the Jobs that clear a NOSPACE alarm: their step, defrag or disarm. */
export const ETCD_ALARM_LABEL = "gitfleet.io/etcd-alarm";

export type AlarmStep = "compact" | "defrag" | "disarm";

/**
 * A Job of a NOSPACE alarm's clearing, run once (its pod retried twice): `etcdctl compact <revision>
 * --physical`, `etcdctl defrag --cluster` (every member in turn), or `etcdctl alarm disarm`, through
 * the members named in `endpoints`. Named by step (etcd-alarm-<step>): one at a time per etcd.
 */
export function etcdAlarmJob(
  plane: HostedControlPlane,
  step: AlarmStep,
  endpoints: readonly string[],
  revision?: number,
): JsonMap {
  const labels = { "app.kubernetes.io/component": "etcd-alarm", [ETCD_ALARM_LABEL]: step };
  const command =
    step === "compact"
      ? ["--command-timeout=5m", "compact", String(revision ?? 0), "--physical"]
      : step === "defrag"
        ? ["--command-timeout=5m", "defrag", "--cluster"]
        : ["alarm", "disarm"];
  return etcdctlJob(plane, alarmJobName(step), labels, step, endpoints, command);
}

export function alarmJobName(step: AlarmStep): string {
  return `etcd-alarm-${step}`;
}

// A Job in the etcd's namespace running etcdctl once with the etcd's client certificate against
// `endpoints` (member names).
function etcdctlJob(
  plane: HostedControlPlane,
  name: string,
  labels: Readonly<Record<string, string>>,
  container: string,
  endpoints: readonly string[],
  command: readonly string[],
): JsonMap {
  const { etcd } = plane;
  const spec: ContainerSpec = {
    name: container,
    image: imageOf(plane, "etcd", etcd.version),
    command: ["etcdctl"],
    args: [`--endpoints=${etcdClientUrls(plane, endpoints).join(",")}`, ...ETCDCTL_TLS, ...command],
    ports: [],
    readiness: { path: "", port: 0, scheme: "HTTP" },
    requests: { cpu: "50m", memory: "64Mi" },
    volumeMounts: [{ name: "pki", mountPath: PKI_DIR, readOnly: true }],
  };
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name, namespace: etcd.namespace, labels: { ...labels } },
    spec: {
      backoffLimit: 2,
      template: jobPodTemplate(plane, labels, spec, [pkiVolume("pki", [PKI_SECRETS.etcdServer])], "Never"),
    },
  };
}

/** etcd-<step>-<ordinal>-<member ID>: within 63 characters (35 at most) for any member of 3 or 5. */
export function replacementJobName(member: string, step: ReplacementStep, id: string): string {
  const ordinal = /-(\d+)$/.exec(member)?.[1] ?? "0";
  return `etcd-${step}-${ordinal}-${id}`;
}
