import { asList, asMap, type JsonMap } from "../../apimachinery/json.js";
import type { ApiResource } from "../api-resources.js";
import { isPlainJson, isTableRange, parseAccept } from "../media-types.js";
import { BUILT_IN_PRINTERS, DEFAULT_PRINTER, type Printer } from "../printers/built-in-printers.js";
import { customResourcePrinter } from "../printers/custom-printers.js";
import { PROTOBUF_MEDIA_TYPE } from "../protobuf/kube-protobuf.js";
import { badRequest } from "../status-error.js";
import type { ApiContext, ApiRequest, ApiResponse, Target } from "./api-context.js";

/**
 * Server-side printing: a read asked for as `application/json;as=Table;v=v1;g=meta.k8s.io` (what
 * `kubectl get` asks for) is answered with a meta.k8s.io Table — the kind's columns, every one of them
 * (kubectl hides priority-1 columns unless `-o wide`), a row per object with its cells, and the row's
 * object as `includeObject` says: PartialObjectMetadata by default, the whole object, or none. A watch
 * asked for so sends a Table per event, with the column definitions in the first only.
 */

type IncludeObject = "None" | "Metadata" | "Object";

interface TableRequest {
  readonly version: string;
  readonly includeObject: IncludeObject;
}

/** Whether the request asks for a Table before any plain form, and how. */
export function tableRequest(request: ApiRequest): TableRequest | undefined {
  let version: string | undefined;
  for (const range of parseAccept(request.accept)) {
    if (isTableRange(range)) {
      version = range.parameters.v;
      break;
    }
    if (isPlainJson(range) || range.type === PROTOBUF_MEDIA_TYPE) return undefined;
  }
  if (!version) return undefined;
  const include = request.query.get("includeObject") ?? "Metadata";
  if (include !== "None" && include !== "Metadata" && include !== "Object")
    throw badRequest(`unrecognized includeObject value: "${include}"`);
  return { version, includeObject: include };
}

/** A list (or one object) as a Table. */
export function asTable(api: ApiContext, target: Target, body: JsonMap, table: TableRequest): JsonMap {
  const printer = printerFor(api, target.resource);
  const isList = Array.isArray(body.items);
  const objects = isList ? asList(body.items).map(asMap) : [body];
  const metadata = asMap(body.metadata);
  return tableOf(api, printer, objects, table, {
    resourceVersion: String(metadata.resourceVersion ?? ""),
    ...(isList && metadata.continue ? { continue: String(metadata.continue) } : {}),
  });
}

/** A watch whose events carry Tables: the first with the column definitions, the others without. */
export function tableWatch(
  api: ApiContext,
  target: Target,
  watch: ApiResponse,
  table: TableRequest,
): ApiResponse {
  const printer = printerFor(api, target.resource);
  const stream = watch.stream;
  if (!stream) return watch;
  return {
    status: watch.status,
    body: undefined,
    stream: (send, end) => {
      let headers = true;
      return stream((event) => {
        const object = asMap(event.object);
        if (event.type === "ERROR" || event.type === "BOOKMARK") {
          send(event);
          return;
        }
        const metadata = asMap(object.metadata);
        send({
          type: event.type ?? "",
          object: tableOf(
            api,
            printer,
            [object],
            table,
            { resourceVersion: String(metadata.resourceVersion ?? "") },
            headers,
          ),
        });
        headers = false;
      }, end);
    },
  };
}

function tableOf(
  api: ApiContext,
  printer: Printer,
  objects: readonly JsonMap[],
  table: TableRequest,
  metadata: JsonMap,
  headers = true,
): JsonMap {
  const now = api.now();
  const apiVersion = `meta.k8s.io/${table.version}`;
  const rows = objects.map((object) => {
    const conditions = printer.conditions?.(object);
    return {
      cells: printer.cells(object, now),
      ...(conditions ? { conditions } : {}),
      ...rowObject(object, table.includeObject, apiVersion),
    };
  });
  return {
    kind: "Table",
    apiVersion,
    metadata,
    ...(headers
      ? {
          columnDefinitions: printer.columns.map((c) => ({
            name: c.name,
            type: c.type,
            format: c.format ?? "",
            description: c.description,
            priority: c.priority ?? 0,
          })),
        }
      : {}),
    rows,
  };
}

function rowObject(object: JsonMap, include: IncludeObject, apiVersion: string): { object?: JsonMap } {
  if (include === "None") return {};
  if (include === "Object") return { object };
  return { object: { kind: "PartialObjectMetadata", apiVersion, metadata: asMap(object.metadata) } };
}

// The kind's printer: kube-apiserver's for a built-in kind, the CRD's columns for a custom resource,
// NAME and CREATED AT for the rest.
function printerFor(api: ApiContext, resource: ApiResource): Printer {
  const builtIn = BUILT_IN_PRINTERS.get(`${resource.group}/${resource.kind}`);
  if (builtIn) return builtIn;
  if (!api.custom.includes(resource)) return DEFAULT_PRINTER;
  const crds = api
    .resources()
    .find((r) => r.group === "apiextensions.k8s.io" && r.name === "customresourcedefinitions");
  const crd = crds
    ? api.store.list(crds, undefined).find((c) => {
        const spec = asMap(c.spec);
        return spec.group === resource.group && asMap(spec.names).kind === resource.kind;
      })
    : undefined;
  return crd ? customResourcePrinter(crd, resource.version) : DEFAULT_PRINTER;
}
