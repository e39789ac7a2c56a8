import { isJsonMap, type JsonMap } from "../apimachinery/json.js";
import { identityOf } from "../model/identity.js";
import { sopsValueKey } from "../model/sops-file.js";
import type { FleetModel, Resource } from "../model/types.js";

/** A sops-encrypted Secret's values as the sync opened them, or why they could not be. */
export type OpenedSecret =
  | { readonly data?: JsonMap; readonly stringData?: JsonMap }
  | { readonly error: string };

/** The opened Secrets of a sync, by identity. A sealed Secret missing from it was not opened (no keys). */
export type OpenedSecrets = ReadonlyMap<string, OpenedSecret>;

/** The fleet's Secrets read from sops files, with their identities. */
export function sealedSecrets(
  model: FleetModel,
): { readonly identity: string; readonly resource: Resource }[] {
  return model.apps.flatMap((app) =>
    app.resources
      .filter((r) => r.sealed !== undefined)
      .map((resource) => ({
        identity: identityOf(resource.group, resource.kind, resource.namespace, resource.name),
        resource,
      })),
  );
}

/**
 * A sealed Secret's data and stringData from its file's opened values (by sopsValueKey): the keys
 * and plaintexts as `sops decrypt` writes them, each field the Secret as written has. Pure.
 */
export function openedSecret(resource: Resource, values: ReadonlyMap<string, string>): OpenedSecret {
  const document = resource.sealed?.document ?? 0;
  const opened: { data?: JsonMap; stringData?: JsonMap } = {};
  for (const field of ["data", "stringData"] as const) {
    if (!isJsonMap(resource.object[field])) continue;
    const prefix = sopsValueKey(document, [field, ""]);
    const plain: JsonMap = {};
    for (const [at, value] of values) {
      const key = at.startsWith(prefix) ? at.slice(prefix.length) : undefined;
      if (key !== undefined && !key.includes("\0")) plain[key] = value;
    }
    opened[field] = plain;
  }
  return opened;
}
