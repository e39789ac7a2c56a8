import { asMap } from "../../apimachinery/json.js";
import { StatusError } from "../status-error.js";
import type { ApiRequest } from "./api-context.js";

/** How the API server treats fields a body has that the kind does not declare, or has twice. */
export type FieldValidation = "Strict" | "Warn" | "Ignore";

/** What a write asks for beside its body: whether it is a dry run, and how unknown fields are taken. */
export interface WriteOptions {
  /** `dryRun=All`: the whole request runs, and nothing is stored. */
  readonly dryRun: boolean;
  /** `fieldValidation`; the API server's default is Warn. */
  readonly fieldValidation: FieldValidation;
}

// The options object each verb's query parameters are decoded into, as validation errors name it.
const OPTIONS_KIND: Readonly<Record<string, string>> = {
  POST: "CreateOptions",
  PUT: "UpdateOptions",
  PATCH: "PatchOptions",
  DELETE: "DeleteOptions",
};

const FIELD_VALIDATIONS = ["", "Ignore", "Strict", "Warn"] as const;

/**
 * A write's options from its query (and, for a delete, from the DeleteOptions body, as kubectl sends
 * them), checked as kube-apiserver checks them: `dryRun` takes only `All` (any other value, an empty
 * one included, is refused with 422 Invalid naming the options kind), `fieldValidation` one of
 * Ignore, Strict, Warn (a delete takes none). Undefined for a read.
 */
export function writeOptions(request: ApiRequest): WriteOptions | undefined {
  const kind = OPTIONS_KIND[request.method];
  if (kind === undefined) return undefined;
  const fromBody = kind === "DeleteOptions" ? asMap(request.body).dryRun : undefined;
  const dryRun = [
    ...request.query.getAll("dryRun"),
    ...(Array.isArray(fromBody) ? fromBody.map((v) => String(v)) : []),
  ];
  const validation = kind === "DeleteOptions" ? "" : (request.query.get("fieldValidation") ?? "");
  const errors: string[] = [];
  if (dryRun.some((value) => value !== "All"))
    errors.push(
      `dryRun: Unsupported value: [${dryRun.map((v) => JSON.stringify(v)).join(",")}]: supported values: "All"`,
    );
  if (!(FIELD_VALIDATIONS as readonly string[]).includes(validation))
    errors.push(
      `fieldValidation: Unsupported value: ${JSON.stringify(validation)}: supported values: ${FIELD_VALIDATIONS.map((v) => JSON.stringify(v)).join(", ")}`,
    );
  if (errors.length > 0) throw invalidOptions(kind, errors);
  return {
    dryRun: dryRun.length > 0,
    fieldValidation: validation === "" ? "Warn" : (validation as FieldValidation),
  };
}

// 422 Invalid as the API server answers options it cannot take: one cause per field.
function invalidOptions(kind: string, errors: readonly string[]): StatusError {
  const listed = errors.length === 1 ? errors[0] : `[${errors.join(", ")}]`;
  return new StatusError(422, "Invalid", `${kind}.meta.k8s.io "" is invalid: ${listed}`, {
    group: "meta.k8s.io",
    kind,
    causes: errors.map((error) => {
      const colon = error.indexOf(": ");
      return {
        reason: "FieldValueNotSupported",
        message: error.slice(colon + 2),
        field: error.slice(0, colon),
      };
    }),
  });
}
