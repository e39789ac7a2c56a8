import type { FleetObject, ObjectReference } from "./fleet-object.js";

// The autoscaling kinds (FederatedHPA, CronScale, ScaleDownRequest). Types only.

export interface ScalingRules {
  readonly stabilizationWindowSeconds?: number;
  readonly selectPolicy?: "Max" | "Min" | "Disabled";
  readonly policies?: readonly {
    readonly type: "Pods" | "Percent";
    readonly value: number;
    readonly periodSeconds: number;
  }[];
}

/** A metric's target (autoscaling/v2 MetricTarget): a percent of requests, a per-pod average, or a value. */
export interface MetricTarget {
  readonly type: "Utilization" | "AverageValue" | "Value";
  readonly averageUtilization?: number;
  readonly averageValue?: string;
  readonly value?: string;
}

/** A custom or external metric by name, and the label selector of its series (autoscaling/v2 MetricIdentifier). */
export interface MetricIdentifier {
  readonly name: string;
  readonly selector?: { readonly matchLabels?: Readonly<Record<string, string>> };
}

/** One metric a FederatedHPA scales on (autoscaling/v2 MetricSpec): Resource, Pods, Object or External. */
export type MetricSpec =
  | {
      readonly type: "Resource";
      readonly resource: { readonly name: string; readonly target: MetricTarget };
    }
  | {
      readonly type: "Pods";
      readonly pods: { readonly metric: MetricIdentifier; readonly target: MetricTarget };
    }
  | {
      readonly type: "Object";
      readonly object: {
        readonly describedObject: {
          readonly apiVersion: string;
          readonly kind: string;
          readonly name: string;
        };
        readonly metric: MetricIdentifier;
        readonly target: MetricTarget;
      };
    }
  | {
      readonly type: "External";
      readonly external: { readonly metric: MetricIdentifier; readonly target: MetricTarget };
    };

export interface FederatedHPASpec {
  readonly scaleTargetRef: ObjectReference;
  readonly mode?: "centralized" | "distributed";
  readonly minReplicas?: number;
  readonly maxReplicas: number;
  readonly metrics?: readonly MetricSpec[];
  readonly behavior?: { readonly scaleUp?: ScalingRules; readonly scaleDown?: ScalingRules };
}

export type FederatedHPA = FleetObject<"FederatedHPA", FederatedHPASpec>;

export interface CronScaleRule {
  readonly name: string;
  readonly schedule: string;
  readonly timeZone?: string;
  readonly targetReplicas?: number;
  readonly targetMinReplicas?: number;
  readonly targetMaxReplicas?: number;
  readonly suspend?: boolean;
  readonly successfulHistoryLimit?: number;
  readonly failedHistoryLimit?: number;
}

export type CronScale = FleetObject<
  "CronScale",
  { readonly scaleTargetRef: ObjectReference; readonly rules: readonly CronScaleRule[] }
>;

/** Removes named pods from one cluster: its share drops by their number (targeted scale-down). */
export type ScaleDownRequest = FleetObject<
  "ScaleDownRequest",
  { readonly scaleTargetRef: ObjectReference; readonly cluster: string; readonly pods: readonly string[] }
>;
