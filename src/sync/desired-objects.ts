import { asMap, type JsonMap } from "../apimachinery/json.js";
import { identityOf } from "../model/identity.js";
import { exportedServices } from "../model/service-exports.js";
import { type SyncRole, syncRoleOf } from "../model/sync-annotations.js";
import type { FleetModel, Resource } from "../model/types.js";
import type { RenderedObject, WorkloadDecision } from "../render/render-result.js";
import { SECRET_DIGEST_ANNOTATION } from "../render/secrets.js";
import { PLACEMENT_ANNOTATION } from "../render/tracking.js";
import { textDigest } from "./inventory.js";
import { DEFAULT_MAX_DELETION_PERCENT, type PruneSettings, parseAllowPrune } from "./prune-plan.js";
import type { OpenedSecret, OpenedSecrets } from "./sealed-secrets.js";
import { teamOwners } from "./team-users.js";

/** How gitfleet treats one object, from its app's syncPolicy and its Placement. */
export interface ObjectPolicy {
  /** Take fields another field manager owns (syncPolicy.forceConflicts or Placement forceConflicts). */
  readonly force: boolean;
  /** Take over an object that exists but gitfleet did not create (conflictResolution: Adopt). */
  readonly adopt: boolean;
  /** Correct drift (default); false only reports it. */
  readonly selfHeal: boolean;
}

/** One object to be in a cluster. */
export interface DesiredObject {
  readonly identity: string;
  readonly app: string;
  /** What is applied: the rendered object, with Secret values restored. */
  readonly object: JsonMap;
  /** Digest of the rendered text: unchanged objects that have not drifted are not applied again. */
  readonly digest: string;
  readonly policy: ObjectPolicy;
  /** What it is in a sync: an object in a wave, a hook, or left out (Skip). */
  readonly role: SyncRole;
  /** Why this object cannot be applied as rendered (reported, not applied). */
  readonly error?: string;
  /** The team whose file it comes from: it is applied as the team (sync/team-users.ts); absent, as the controller. */
  readonly team?: string;
}

/**
 * The objects each cluster should hold, from the rendered tree and the fleet model it came from:
 * each object's policy (force, adopt, self-heal) from its app's syncPolicy and its Placements, and a
 * Secret's values read back from the source (the rendered tree holds only their digest; a Secret
 * whose values an Override changed cannot be restored and is reported instead), a sops-encrypted
 * one's from what the sync opened (`opened`); a team's object applied as its team. Pure.
 */
export function desiredByCluster(
  objects: readonly RenderedObject[],
  model: FleetModel,
  opened: OpenedSecrets = new Map(),
): Map<string, DesiredObject[]> {
  const policies = policyLookup(model);
  const secrets = secretSources(model);
  const owners = teamOwners(model);
  const byCluster = new Map<string, DesiredObject[]>();
  for (const rendered of objects) {
    const list = byCluster.get(rendered.cluster) ?? [];
    const object = rendered.object;
    const placements = String(asMap(asMap(object.metadata).annotations)[PLACEMENT_ANNOTATION] ?? "")
      .split(",")
      .filter((p) => p !== "");
    const restored = restoreSecret(object, secrets.get(rendered.identity), opened.get(rendered.identity));
    const team = owners.get(rendered.identity);
    list.push({
      identity: rendered.identity,
      app: rendered.app,
      object: restored.object,
      digest: textDigest(rendered.text),
      policy: policies(rendered.app, placements),
      role: syncRoleOf(asMap(asMap(object.metadata).annotations)),
      ...(restored.error ? { error: restored.error } : {}),
      ...(team ? { team } : {}),
    });
    byCluster.set(rendered.cluster, list);
  }
  return byCluster;
}

/**
 * The fleet's pruning rules: the budget and fleet-wide allowPrune tokens from fleet.yaml, each app's
 * own tokens (good for its own objects only), apps that do not prune, and the apps failover moved
 * off a cluster the probes found NotReady (a Cluster file's drain or NoExecute taint is a person's
 * change, which the budget covers).
 */
export function pruneSettings(model: FleetModel, decisions: readonly WorkloadDecision[] = []): PruneSettings {
  const pruning = model.fleet?.spec.pruning;
  const noPrune = new Set<string>();
  const appTokens = new Map<string, Set<string>>();
  for (const app of model.apps) {
    const policy = app.definition?.spec.syncPolicy;
    appTokens.set(app.name, new Set(parseAllowPrune(policy?.allowPrune)));
    if (policy?.prune === false) noPrune.add(app.name);
  }
  const drainedByPeople = new Set(
    model.clusters
      .filter((c) => c.spec.drain === true || (c.spec.taints ?? []).some((t) => t.effect === "NoExecute"))
      .map((c) => c.metadata.name),
  );
  // Apps whose replicas failover moved off a cluster, as "cluster\0app".
  const failedOver = new Set(
    decisions.flatMap((d) =>
      (d.failover?.movedOff ?? [])
        .filter((m) => !drainedByPeople.has(m.cluster))
        .map((m) => `${m.cluster}\0${d.app}`),
    ),
  );
  const traffic = trafficObjects(model);
  return {
    maxDeletionPercent: pruning?.maxDeletionPercent ?? DEFAULT_MAX_DELETION_PERCENT,
    allowedTokens: new Set(parseAllowPrune(pruning?.allowPrune)),
    appTokens,
    appPrunes: (app) => !noPrune.has(app),
    failedOver: (cluster, app) => failedOver.has(`${cluster}\0${app}`),
    ...(traffic.size > 0 ? { trafficObject: (identity, app) => traffic.get(identity) === app } : {}),
  };
}

// The EndpointSlices the endpoints mode renders for each exported service and producing cluster
// (`<service>-<cluster>`), by identity, with their app.
function trafficObjects(model: FleetModel): Map<string, string> {
  const objects = new Map<string, string>();
  if (model.fleet?.spec.serviceDiscovery?.mode !== "endpoints") return objects;
  for (const exported of exportedServices(model))
    for (const cluster of model.clusters)
      objects.set(
        identityOf(
          "discovery.k8s.io",
          "EndpointSlice",
          exported.namespace,
          `${exported.name}-${cluster.metadata.name}`,
        ),
        exported.app,
      );
  return objects;
}

function policyLookup(model: FleetModel): (app: string, placements: readonly string[]) => ObjectPolicy {
  const apps = new Map(model.apps.map((a) => [a.name, a.definition?.spec.syncPolicy]));
  const placements = new Map(model.placements.map((p) => [p.metadata.name, p.spec]));
  return (app, names) => {
    const syncPolicy = apps.get(app);
    const specs = names.map((name) => placements.get(name));
    return {
      force: syncPolicy?.forceConflicts === true || specs.some((s) => s?.forceConflicts === true),
      adopt: specs.some((s) => s?.conflictResolution === "Adopt"),
      selfHeal: syncPolicy?.selfHeal !== false,
    };
  };
}

// The Secrets of the fleet repo as written, by identity.
function secretSources(model: FleetModel): Map<string, Resource> {
  const secrets = new Map<string, Resource>();
  for (const app of model.apps)
    for (const resource of app.resources)
      if (resource.group === "" && resource.kind === "Secret")
        secrets.set(identityOf("", "Secret", resource.namespace, resource.name), resource);
  return secrets;
}

// A rendered Secret carries a digest of its values, never the values: they are read from the Secret
// as the source commit writes it (the render refused any Secret an Override changed), or, for one
// from a sops file, from what the sync opened with the operator's keys.
function restoreSecret(
  object: JsonMap,
  source: Resource | undefined,
  opened: OpenedSecret | undefined,
): { object: JsonMap; error?: string } {
  const digest = asMap(asMap(object.metadata).annotations)[SECRET_DIGEST_ANNOTATION];
  if (object.kind !== "Secret" || object.apiVersion !== "v1" || digest === undefined) return { object };
  if (!source)
    return {
      object,
      error:
        "the Secret is not in the rendered source commit; gitfleet applies Secret values only as written",
    };
  const values = source.sealed ? opened : (source.object as OpenedSecret);
  if (values === undefined)
    return {
      object,
      error: `${source.origin.file} is encrypted with sops and this controller holds no age key (--sops-age-key-file)`,
    };
  if ("error" in values)
    return { object, error: `${source.origin.file} cannot be decrypted: ${values.error}` };
  return {
    object: {
      ...object,
      ...(values.data === undefined ? {} : { data: values.data }),
      ...(values.stringData === undefined ? {} : { stringData: values.stringData }),
    },
  };
}
