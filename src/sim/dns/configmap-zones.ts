import { asMap } from "../../apimachinery/json.js";
import type { MemberApi } from "../member-api.js";
import { parseZone, type Zone, ZoneFileError } from "./zone-file.js";

// The zones a member's cluster DNS serves, read from ConfigMaps in the member as CoreDNS's file
// plugin reads a mounted one: every key `db.<zone>` of the named ConfigMaps is the zone `<zone>`.
// A zone is parsed once per text; one that does not parse is left out and its error kept, as
// CoreDNS keeps serving without a zone it cannot load.

export interface ConfigMapZones {
  /** The zones as the ConfigMaps hold them now. */
  zones(): readonly Zone[];
  /** The last error of each zone that did not parse, by "namespace/name#key". */
  readonly errors: ReadonlyMap<string, string>;
}

export function configMapZones(
  api: MemberApi,
  configMaps: readonly { readonly namespace: string; readonly name: string }[],
): ConfigMapZones {
  // The last text of each key and its zone: the cache does not grow with every change.
  const parsed = new Map<string, { text: string; zone: Zone }>();
  const errors = new Map<string, string>();
  const zoneOf = (where: string, key: string, text: string): Zone | undefined => {
    const known = parsed.get(where);
    if (known?.text === text) return known.zone;
    try {
      const zone = parseZone(text, key.slice("db.".length), where);
      parsed.set(where, { text, zone });
      errors.delete(where);
      return zone;
    } catch (error) {
      if (!(error instanceof ZoneFileError)) throw error;
      parsed.delete(where);
      errors.set(where, error.message);
      return undefined;
    }
  };
  return {
    errors,
    zones: () => {
      const resource = api.resources().find((r) => r.group === "" && r.name === "configmaps");
      if (!resource) return [];
      return configMaps.flatMap(({ namespace, name }) =>
        Object.entries(asMap(api.store.get({ resource, namespace, name })?.data)).flatMap(([key, text]) => {
          if (!key.startsWith("db.") || typeof text !== "string") return [];
          return zoneOf(`${namespace}/${name}#${key}`, key, text) ?? [];
        }),
      );
    },
  };
}
