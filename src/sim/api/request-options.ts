import { asMap } from "../../apimachinery/json.js";
import { type FieldError, invalidObject } from "../field-error.js";
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
  const errors: FieldError[] = [];
  if (dryRun.some((value) => value !== "All"))
    errors.push({
      type: "FieldValueNotSupported",
      field: "dryRun",
      value: dryRun,
      detail: 'supported values: "All"',
    });
  if (!(FIELD_VALIDATIONS as readonly string[]).includes(validation))
    errors.push({
      type: "FieldValueNotSupported",
      field: "fieldValidation",
      value: validation,
      detail: `supported values: ${FIELD_VALIDATIONS.map((v) => JSON.stringify(v)).join(", ")}`,
    });
  // 422 Invalid as the API server answers options it cannot take: `CreateOptions.meta.k8s.io "" is invalid`.
  if (errors.length > 0) throw invalidObject({ group: "meta.k8s.io", kind }, "", errors);
  return {
    dryRun: dryRun.length > 0,
    fieldValidation: validation === "" ? "Warn" : (validation as FieldValidation),
  };
}
