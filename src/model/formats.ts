import { isPrototypeKey } from "../apimachinery/json.js";
import { explainInvalidJsonPath } from "../apimachinery/json-path.js";
import { explainInvalidEtcdVersion, explainInvalidKubeVersion } from "../apimachinery/kube-version.js";
import {
  explainInvalidDns1123Label,
  explainInvalidDns1123Subdomain,
  explainInvalidFleetName,
  explainInvalidLabelKey,
} from "../apimachinery/names.js";
import { isQuantity } from "../apimachinery/quantity.js";
import { explainInvalidCron } from "./cron.js";

const DURATION = /^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$/;

/** A string format used by the schemas: how to check it and how to explain a bad value. */
export interface StringFormat {
  readonly name: string;
  /** Why the value is invalid, or undefined when it is valid. */
  readonly explain: (value: string) => string | undefined;
}

/** Every custom format the schemas use; registered with ajv and used to word its errors. */
export const STRING_FORMATS: readonly StringFormat[] = [
  { name: "dns1123-label", explain: explainInvalidDns1123Label },
  { name: "fleet-name", explain: explainInvalidFleetName },
  {
    name: "field-path",
    explain: (value) => explainPrototypeSegments(value, value.split(".")),
  },
  {
    name: "patch-path",
    explain: (value) =>
      explainPrototypeSegments(
        value,
        value
          .split("/")
          .slice(1)
          .map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~")),
      ),
  },
  { name: "dns1123-subdomain", explain: explainInvalidDns1123Subdomain },
  { name: "label-key", explain: explainInvalidLabelKey },
  { name: "state-json-path", explain: explainInvalidJsonPath },
  {
    name: "duration",
    explain: (value) =>
      DURATION.test(value) ? undefined : `"${value}" is not a duration; write it like 30s, 10m or 1h30m`,
  },
  {
    name: "quantity",
    explain: (value) =>
      isQuantity(value)
        ? undefined
        : `"${value}" is not a resource quantity; write it like 500m, 2, 1Gi or 512Mi`,
  },
  { name: "kube-version", explain: explainInvalidKubeVersion },
  { name: "time-zone", explain: explainInvalidTimeZone },
  { name: "etcd-version", explain: explainInvalidEtcdVersion },
  {
    name: "cron",
    explain: (value) => {
      const reason = explainInvalidCron(value);
      return reason === undefined ? undefined : `"${value}" is not a cron schedule: ${reason}`;
    },
  },
];

// A path may not step through "__proto__", "constructor" or "prototype": in JavaScript those reach
// an object's prototype, so a write along such a path would change every object of the process.
function explainPrototypeSegments(path: string, segments: readonly string[]): string | undefined {
  const bad = segments.find(isPrototypeKey);
  return bad === undefined
    ? undefined
    : `"${path}" steps through "${bad}", which is not allowed: it reaches JavaScript's object prototype`;
}

/** The formats as ajv calls them (`validate`), by name: for the precompiled schema validators. */
export const FORMAT_VALIDATORS: Readonly<Record<string, { readonly validate: (value: string) => boolean }>> =
  Object.fromEntries(
    STRING_FORMATS.map((format) => [
      format.name,
      { validate: (value: string) => format.explain(value) === undefined },
    ]),
  );

/** Why `value` is not an IANA time zone this runtime knows (Europe/Berlin, UTC), or undefined. */
export function explainInvalidTimeZone(value: string): string | undefined {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: value });
    return undefined;
  } catch {
    return `"${value}" is not an IANA time zone; write it like UTC, Europe/Berlin or America/New_York`;
  }
}
