import { webDeployment } from "./minimal-fleet.js";

// The fleet the autoscaling integration tests share: clusters east and west, and an app whose
// workload a Placement divides by static weights.

/** clusters/<name>.yaml */
export const clusterYaml = (
  name: string,
  { provider = `p-${name}`, region = `r-${name}`, extra = "" } = {},
) =>
  `apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: ${name}\nspec:\n  provider: ${provider}\n  region: ${region}\n${extra}`;

/** A Placement of `app` dividing its replicas over clusters by static weights, e.g. { east: 2, west: 1 }. */
export const weightedPlacement = (
  app: string,
  weights: Readonly<Record<string, number>>,
) => `apiVersion: gitfleet.io/v1alpha1
kind: Placement
metadata:
  name: ${app}
spec:
  apps: [${app}]
  replicaScheduling:
    type: Divided
    divisionPreference: Weighted
    weightPreference:
      staticWeightList:
${Object.entries(weights)
  .map(
    ([cluster, weight]) =>
      `        - targetCluster: {clusterNames: [${cluster}]}\n          weight: ${weight}\n`,
  )
  .join("")}`;

/** fleet.yaml, the two clusters, and an app in its own namespace. */
export function twoClusterFiles(app: string, namespace: string): Record<string, string> {
  return {
    "fleet.yaml": "apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata:\n  name: t\n",
    "clusters/east.yaml": clusterYaml("east"),
    "clusters/west.yaml": clusterYaml("west"),
    [`apps/${app}/app.yaml`]: `apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: ${app}\nspec:\n  namespace: ${namespace}\n`,
  };
}

/** The web app of three replicas (100m CPU each) on east and west. */
export function webOnTwoClusters(east: number, west: number): Record<string, string> {
  return {
    ...twoClusterFiles("web", "shop"),
    "apps/web/deployment.yaml": webDeployment(3, "100m"),
    "placements/web.yaml": weightedPlacement("web", { east, west }),
  };
}
