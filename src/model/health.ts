/** How an object (or an app in a cluster) is doing, Argo CD's vocabulary. */
export type HealthStatus = "Healthy" | "Progressing" | "Degraded" | "Missing" | "Unknown";

/** Every health status, for readers that validate one. */
export const HEALTH_STATUSES: readonly HealthStatus[] = [
  "Healthy",
  "Progressing",
  "Degraded",
  "Missing",
  "Unknown",
];

/** An object's health and why. */
export interface Health {
  readonly status: HealthStatus;
  /** Why, in a phrase; absent when Healthy needs no explanation. */
  readonly reason?: string;
}
