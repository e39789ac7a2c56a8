/**
 * What every object of the fleet repo shares: where it was written, its metadata, the selectors,
 * taints and references its specs use, and the envelope of a gitfleet kind. Types only.
 */

import type { LabelSelector, Labels } from "../apimachinery/label-selector.js";

export type { LabelSelector, LabelSelectorRequirement, Labels } from "../apimachinery/label-selector.js";

/** Where a model object was written: its file and its document's index in that file. */
export interface Origin {
  readonly file: string;
  readonly index: number;
  /** For an object inside a List document (kind: List, ConfigMapList, …): its position in `items`. */
  readonly item?: number;
}

export interface ObjectMeta {
  readonly name: string;
  readonly namespace?: string;
  readonly labels?: Labels;
  readonly annotations?: Labels;
}

export interface FieldSelectorRequirement {
  readonly key: "provider" | "region" | "zone";
  readonly operator: "In" | "NotIn";
  readonly values?: readonly string[];
}

export interface ClusterAffinity {
  readonly clusterNames?: readonly string[];
  readonly exclude?: readonly string[];
  readonly labelSelector?: LabelSelector;
  readonly fieldSelector?: { readonly matchExpressions?: readonly FieldSelectorRequirement[] };
}

export interface ResourceSelector {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly labelSelector?: LabelSelector;
}

export type TaintEffect = "NoSchedule" | "NoExecute";

export interface Taint {
  readonly key: string;
  readonly value?: string;
  readonly effect: TaintEffect;
}

export interface Toleration {
  readonly key?: string;
  readonly operator?: "Equal" | "Exists";
  readonly value?: string;
  readonly effect?: TaintEffect;
  readonly tolerationSeconds?: number;
}

export interface ObjectReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
}

/** A gitfleet object as written: envelope plus spec, with where it came from. */
export interface FleetObject<Kind extends string, Spec> {
  readonly apiVersion: "gitfleet.io/v1alpha1";
  readonly kind: Kind;
  readonly metadata: ObjectMeta;
  readonly spec: Spec;
  readonly origin: Origin;
}
