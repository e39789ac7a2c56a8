/** The names of the apps gitfleet generates for hosted clusters: fleet data, known before any is built. */

/** The name of a hosted cluster's control-plane app (its objects in the host). */
export function controlPlaneAppName(cluster: string): string {
  return `gitfleet-cp-${cluster}`;
}

/** Whether an app is a hosted cluster's control plane or a shared etcd (their Secrets hold credentials). */
export function isControlPlaneApp(app: string): boolean {
  return app.startsWith("gitfleet-cp-") || app.startsWith("gitfleet-etcd-");
}

/** The name of a shared etcd's app (its objects in the host). */
export function sharedEtcdAppName(etcd: string): string {
  return `gitfleet-etcd-${etcd}`;
}

/**
 * The app of every hosted cluster's addons (each cluster's objects in the cluster itself): one app,
 * as the objects have the same names everywhere, with a build per hosted cluster.
 */
export const ADDONS_APP = "gitfleet-addons";
