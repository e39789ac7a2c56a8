import { suggest } from "../schema-problems.js";
import type { FleetSpec, Origin } from "../types.js";
import { clusterAffinitiesOf } from "./affinities.js";
import type { Path, RuleContext } from "./rule.js";

/** A place in a document that names a cluster or an app. */
interface NameReference {
  readonly origin: Origin;
  readonly path: Path;
  readonly name: string;
}

/** Every cluster, app and scheduler profile named anywhere must exist in the repo. */
export function checkReferences(context: RuleContext): void {
  const { model, declared } = context;
  const clusters = [...(declared.get("Cluster") ?? [])];
  const apps = model.apps.map((app) => app.name);
  reportUnknown(context, clusterReferences(context), clusters, "cluster", "clusters/");
  reportUnknown(context, appReferences(context), apps, "app", "apps/");
  const profiles = (model.fleet?.spec.schedulerProfiles ?? []).map((p) => p.name);
  for (const placement of model.placements) {
    const name = placement.spec.schedulerProfile;
    if (name === undefined || profiles.includes(name)) continue;
    context.reporter.report({
      origin: placement.origin,
      path: ["spec", "schedulerProfile"],
      code: "UNKNOWN_REFERENCE",
      message: `scheduler profile "${name}" is not defined in fleet.yaml spec.schedulerProfiles${suggest(name, profiles)}`,
    });
  }
}

function reportUnknown(
  context: RuleContext,
  references: readonly NameReference[],
  known: readonly string[],
  what: string,
  where: string,
): void {
  const knownSet = new Set(known);
  for (const reference of references) {
    if (knownSet.has(reference.name)) continue;
    context.reporter.report({
      origin: reference.origin,
      path: reference.path,
      code: "UNKNOWN_REFERENCE",
      message: `unknown ${what} "${reference.name}"${suggest(reference.name, known)}; ${what}s are defined under ${where}`,
    });
  }
}

function clusterReferences({ model }: RuleContext): NameReference[] {
  const out: NameReference[] = [];
  const fromList = (origin: Origin, path: Path, names: readonly string[] | undefined) => {
    for (const [i, name] of (names ?? []).entries()) out.push({ origin, path: [...path, i], name });
  };
  for (const { origin, path, affinity } of clusterAffinitiesOf(model)) {
    fromList(origin, [...path, "clusterNames"], affinity.clusterNames);
    fromList(origin, [...path, "exclude"], affinity.exclude);
  }
  for (const { origin, spec } of model.placements)
    fromList(origin, ["spec", "rollout", "order"], spec.rollout?.order);
  for (const { origin, spec } of model.migrations) {
    for (const [i, batch] of spec.batches.entries())
      fromList(origin, ["spec", "batches", i, "clusters"], batch.clusters);
  }
  if (model.fleet) {
    fromList(model.fleet.origin, ["spec", "rollout", "order"], model.fleet.spec.rollout?.order);
    out.push(...windowNames(model.fleet.origin, model.fleet.spec.syncWindows, "clusters"));
  }
  return out;
}

function appReferences({ model }: RuleContext): NameReference[] {
  const out: NameReference[] = [];
  for (const { origin, spec } of [...model.placements, ...model.overrides]) {
    for (const [i, name] of (spec.apps ?? []).entries())
      out.push({ origin, path: ["spec", "apps", i], name });
  }
  for (const { origin, spec } of model.migrations) {
    for (const [i, batch] of spec.batches.entries()) {
      for (const [j, name] of batch.apps.entries())
        out.push({ origin, path: ["spec", "batches", i, "apps", j], name });
    }
  }
  out.push(...dependencyNames(model.apps));
  if (model.fleet) out.push(...windowNames(model.fleet.origin, model.fleet.spec.syncWindows, "apps"));
  return out;
}

// The apps each App's spec.dependsOn names.
function dependencyNames(apps: RuleContext["model"]["apps"]): NameReference[] {
  return apps.flatMap(({ definition }) =>
    definition
      ? (definition.spec.dependsOn ?? []).map((name, i) => ({
          origin: definition.origin,
          path: ["spec", "dependsOn", i],
          name,
        }))
      : [],
  );
}

// The names a sync window lists (patterns with * match any number of names and are not checked).
function windowNames(
  origin: Origin,
  windows: FleetSpec["syncWindows"],
  field: "apps" | "clusters",
): NameReference[] {
  return (windows ?? []).flatMap((window, i) =>
    (window[field] ?? [])
      .map((name, j) => ({ origin, path: ["spec", "syncWindows", i, field, j], name }))
      .filter((reference) => !reference.name.includes("*")),
  );
}
