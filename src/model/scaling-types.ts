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

export interface FederatedHPASpec {
  readonly scaleTargetRef: ObjectReference;
  readonly mode?: "centralized" | "distributed";
  readonly minReplicas?: number;
  readonly maxReplicas: number;
  readonly metrics?: readonly {
    readonly type: "Resource";
    readonly resource: {
      readonly name: string;
      readonly target: {
        readonly type: "Utilization" | "AverageValue";
        readonly averageUtilization?: number;
        readonly averageValue?: string;
      };
    };
  }[];
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
