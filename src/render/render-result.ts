import type { JsonMap } from "../apimachinery/json.js";
import type { MemberHpas } from "../autoscale/autoscale-step.js";
import type { FailoverRecord } from "../failover/workload-failover.js";
import type { Origin } from "../model/fleet-object.js";
import type { ScheduleDecision } from "../schedule/types.js";

// What a render gives: the objects every cluster gets, the workloads' decisions and the errors. The
// types live apart from the renderer so that its parts (placement, member HPAs) can name them.

/** One object as one cluster gets it. */
export interface RenderedObject {
  readonly cluster: string;
  readonly app: string;
  /** `rendered/<cluster>/<namespace|_cluster>/<group>.<kind>.<name>.yaml`. */
  readonly path: string;
  /** group/kind/namespace/name: the object's identity across clusters and renders. */
  readonly identity: string;
  readonly object: JsonMap;
  /** The serialized file, byte-stable. */
  readonly text: string;
  /** What built it, when not the app's manifests: "kustomize apps/docs/overlays/prod (target prod)", "helm …". */
  readonly source?: string;
}

/** Where one workload runs, and why. */
export interface WorkloadDecision {
  /** group/kind/namespace/name: the workload's identity across renders. */
  readonly identity: string;
  readonly app: string;
  readonly resource: string;
  readonly placement: string;
  /** The replicas the template asks for: the total a Divided workload splits, or what each cluster gets when Duplicated. */
  readonly replicas: number;
  /** The FederatedHPA whose total `replicas` is (instead of the source's count), when one decided it. */
  readonly autoscaledBy?: string;
  /** The ScaleDownRequest whose division the clusters hold (a targeted scale-down). */
  readonly scaleDownBy?: string;
  /** A distributed FederatedHPA: the member HPA each cluster gets, with its share of the bounds. */
  readonly memberHpas?: MemberHpas;
  readonly decision: ScheduleDecision;
  /** What failover did to it: clusters it moved off, old replicas kept there, capacity caps. */
  readonly failover?: FailoverRecord;
  /**
   * Clusters whose capacity was unknown when a division by capacity was made: once it is known, the
   * division is made again from scratch (it was provisional).
   */
  readonly capacityUnknown?: readonly string[];
  /** A divided StatefulSet: per cluster the first ordinal of its pods (spec.ordinals.start), disjoint ranges. */
  readonly ordinals?: Readonly<Record<string, number>>;
  /** With statePreservation: per cluster, the labels its copy's status last gave (remembered while it does not answer). */
  readonly state?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** Why failover and autoscaling leave it as the last render placed it (a suspended App or Placement). */
  readonly suspended?: string;
  /** The next time (ms) its failover can change without a new observation (not kept in status). */
  readonly wakeAt?: number;
}

/** An object that could not be rendered for a cluster, naming the Override file and rule when one failed. */
export interface RenderError {
  readonly cluster: string;
  readonly app: string;
  readonly resource: string;
  readonly file: string;
  readonly rule?: number;
  /** The document and field the error is about, for a caller that can give its line and column. */
  readonly at?: { readonly origin: Origin; readonly path: readonly (string | number)[] };
  /** The problem code it is reported with (default RENDER_FAILED). */
  readonly code?: "SERVICE_CONFLICT";
  readonly message: string;
}

/** Everything every cluster gets, sorted by path; the scheduling decisions; and render errors. */
export interface RenderResult {
  readonly objects: readonly RenderedObject[];
  readonly decisions: readonly WorkloadDecision[];
  readonly errors: readonly RenderError[];
}
