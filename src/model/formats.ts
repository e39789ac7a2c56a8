import { explainInvalidCron } from "./cron.js";
import { explainInvalidDns1123Label, explainInvalidDns1123Subdomain } from "./names.js";
import { isQuantity } from "./quantity.js";

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
  { name: "dns1123-subdomain", explain: explainInvalidDns1123Subdomain },
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
  {
    name: "cron",
    explain: (value) => {
      const reason = explainInvalidCron(value);
      return reason === undefined ? undefined : `"${value}" is not a cron schedule: ${reason}`;
    },
  },
];
