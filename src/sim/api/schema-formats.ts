import { isIPv6 } from "node:net";
import type { JsonMap } from "../../apimachinery/json.js";

/**
 * String formats a CRD's schema may name and kube-apiserver checks, as its format registry does
 * (go-openapi's strfmt). A format the API server keeps but these do not check (uri, email, isbn,
 * creditcard, ssn, rgbcolor, duration, bsonobjectid, the k8s- names) takes any string here.
 */
const CHECKS: Readonly<Record<string, (value: string) => boolean>> = {
  date: isDate,
  datetime: isDateTime,
  uuid: (v) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(v),
  uuid3: (v) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(v),
  uuid4: (v) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i.test(v),
  uuid5: (v) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i.test(v),
  ipv4: isIPv4,
  ipv6: (v) => isIPv6(v),
  cidr: isCIDR,
  mac: (v) =>
    /^[0-9a-f]{2}(?:([:-])[0-9a-f]{2})(?:\1[0-9a-f]{2}){4}(?:(?:\1[0-9a-f]{2}){2}(?:(?:\1[0-9a-f]{2}){12})?)?$/i.test(
      v,
    ) || /^[0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4}(?:(?:\.[0-9a-f]{4})(?:(?:\.[0-9a-f]{4}){5})?)?$/i.test(v),
  byte: (v) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(v),
  hostname: isHostname,
  hexcolor: (v) => /^#?(?:[0-9a-f]{3}|[0-9a-f]{6})$/i.test(v),
};

/** What the API server keeps of a string format (any other it drops from the schema it validates with). */
const KEPT = new Set([
  ...Object.keys(CHECKS),
  "bsonobjectid",
  "uri",
  "email",
  "isbn",
  "isbn10",
  "isbn13",
  "creditcard",
  "ssn",
  "rgbcolor",
  "password",
  "duration",
]);

/** The format a string of this schema is checked against, by its name as written; none if dropped. */
export function supportedFormat(schema: JsonMap): string | undefined {
  const format = schema.format;
  if (typeof format !== "string" || format === "") return undefined;
  if (schema.type !== undefined && schema.type !== "string") return undefined;
  return KEPT.has(format.replaceAll("-", "")) ? format : undefined;
}

/** Whether a string is of the format (one not checked here holds). */
export function formatHolds(format: string, value: string): boolean {
  const check = CHECKS[format.replaceAll("-", "")];
  return check === undefined || check(value);
}

// A full date, YYYY-MM-DD, that exists.
function isDate(value: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

// A date, "t" (either case), then hh:mm:ss, an optional fraction, and "z" or an offset.
function isDateTime(value: string): boolean {
  if (value.length < 4) return false;
  const parts = value.toLowerCase().split("t");
  if (parts.length < 2 || !isDate(parts[0] as string)) return false;
  const time = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/.exec(
    parts[1] as string,
  );
  return (
    time !== null && (time[1] as string) <= "23" && (time[2] as string) <= "59" && (time[3] as string) <= "59"
  );
}

// Four dotted decimal parts of at most 255 each (leading zeros taken).
function isIPv4(value: string): boolean {
  const parts = value.split(".");
  return parts.length === 4 && parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255);
}

function isCIDR(value: string): boolean {
  const [address, prefix, ...rest] = value.split("/");
  if (address === undefined || prefix === undefined || rest.length > 0 || !/^\d{1,3}$/.test(prefix))
    return false;
  if (isIPv4(address)) return Number(prefix) <= 32;
  return isIPv6(address) && Number(prefix) <= 128;
}

const HOSTNAME =
  /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$/u;

function isHostname(value: string): boolean {
  // The lengths first: the pattern then runs on at most 255 bytes.
  return (
    Buffer.byteLength(value) <= 255 &&
    value.split(".").every((label) => Buffer.byteLength(label) <= 63) &&
    HOSTNAME.test(value)
  );
}
