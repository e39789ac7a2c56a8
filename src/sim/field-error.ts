import { canonicalJson, type Json } from "../apimachinery/json.js";
import { StatusError } from "./status-error.js";

/**
 * One finding of an object's validation, as the API server's field.Error: the field it is at, its
 * type (the StatusCause's reason) and what is said of it. The value it names is printed as Go
 * prints it (see `errorBody`).
 */
export interface FieldError {
  readonly type: FieldErrorType;
  readonly field: string;
  /** The value found; absent when the type prints none (Required, TooLong). */
  readonly value?: Json;
  readonly detail: string;
}

/** field.ErrorType: the reason a StatusCause carries, and the words its message starts with. */
export type FieldErrorType =
  | "FieldValueRequired"
  | "FieldValueInvalid"
  | "FieldValueTypeInvalid"
  | "FieldValueNotSupported"
  | "FieldValueTooLong"
  | "FieldValueTooMany"
  | "FieldValueDuplicate";

const WORDS: Readonly<Record<FieldErrorType, string>> = {
  FieldValueRequired: "Required value",
  FieldValueInvalid: "Invalid value",
  FieldValueTypeInvalid: "Invalid value",
  FieldValueNotSupported: "Unsupported value",
  FieldValueTooLong: "Too long",
  FieldValueTooMany: "Too many",
  FieldValueDuplicate: "Duplicate value",
};

/**
 * The error without its field, as field.Error's ErrorBody writes it: `Required value`, `Too long: may
 * not be more than 5 bytes`, `Invalid value: "abc": spec.size in body must be of type integer:
 * "string"`. A number, boolean or string prints as Go's %v / %q would; anything else as its JSON.
 */
export function errorBody(error: FieldError): string {
  const words = WORDS[error.type];
  const shown = error.value === undefined ? words : `${words}: ${goPrinted(error.value)}`;
  return error.detail === "" ? shown : `${shown}: ${error.detail}`;
}

/** `spec.size: Invalid value: …`: the field, then the body. */
export function errorText(error: FieldError): string {
  return `${error.field}: ${errorBody(error)}`;
}

/**
 * 422 Invalid for an object of `kind` (qualified by its group, as `Widget.example.com`) named `name`:
 * the message lists each distinct error (one alone, several in brackets), the details one cause each.
 */
export function invalidObject(
  resource: { readonly group: string; readonly kind: string },
  name: string,
  errors: readonly FieldError[],
): StatusError {
  const qualified = resource.group ? `${resource.kind}.${resource.group}` : resource.kind;
  const texts = [...new Set(errors.map(errorText))];
  const listed = texts.length === 1 ? texts[0] : `[${texts.join(", ")}]`;
  return new StatusError(422, "Invalid", `${qualified} "${name}" is invalid: ${listed}`, {
    name,
    group: resource.group,
    kind: resource.kind,
    causes: errors.map((error) => ({ reason: error.type, message: errorBody(error), field: error.field })),
  });
}

// A value as field.Error prints it: %v for numbers and booleans, %q for strings, else its JSON.
function goPrinted(value: Json): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number") return goNumber(value);
  if (typeof value === "boolean") return String(value);
  // As encoding/json marshals what it decoded: map keys sorted.
  return canonicalJson(value);
}

/**
 * A number as Go's %v prints what an object's JSON decodes to: a whole number is an int64, printed in
 * full; any other a float64 (`goFloat`).
 */
export function goNumber(value: number): string {
  return Number.isInteger(value) && Math.abs(value) <= Number.MAX_SAFE_INTEGER
    ? String(value)
    : goFloat(value);
}

/** A float64 as Go's %v prints it: the shortest digits, in e-notation from an exponent of 6 or below -4. */
export function goFloat(value: number): string {
  if (value === 0) return "0";
  const exponent = Math.floor(Math.log10(Math.abs(value)));
  if (exponent >= -4 && exponent < 6) return String(value);
  const [mantissa, power = "0"] = value.toExponential().split("e");
  const sign = power.startsWith("-") ? "-" : "+";
  return `${mantissa}e${sign}${power.replace(/^[+-]/, "").padStart(2, "0")}`;
}
