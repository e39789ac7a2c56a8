import type { JsonMap } from "../../apimachinery/json.js";
import type { ApiResource } from "../api-resources.js";
import type { ContainerLogs } from "../container-logs.js";
import type { ObjectStore } from "../object-store.js";
import type { LoadRule } from "../pod-metrics.js";
/** A request as the HTTP edge hands it over: the body already parsed from JSON (or YAML for apply). */
export interface ApiRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly contentType: string;
  /** The Accept header ("" when absent): a list may be asked for as a Table. */
  readonly accept?: string;
  readonly body: unknown;
  /** The fields the body gives twice in one object (`data.v`), which fieldValidation judges. */
  readonly duplicateFields?: readonly string[];
  /** The User-Agent header: a write without ?fieldManager= is recorded under its first word, as a real server does. */
  readonly userAgent?: string;
}

export interface ApiResponse {
  readonly status: number;
  readonly body: unknown;
  /** A watch: starts sending events; returns the function that stops them. */
  readonly stream?: (send: (event: JsonMap) => void, end: () => void) => () => void;
  /** Plain text (pods/log), answered as text/plain. */
  readonly text?: string;
  /** Text that keeps coming (pods/log?follow=true): starts writing; returns the function that stops. */
  readonly textStream?: (write: (text: string) => void, end: () => void) => () => void;
  /** A watch's kind: its events can be protobuf when the kind has a message. */
  readonly streamKind?: { readonly apiVersion: string; readonly kind: string };
  /** Warnings for the client (fields dropped under fieldValidation=Warn), sent as Warning headers. */
  readonly warnings?: readonly string[];
}

/** How a member behaves where Kubernetes leaves room: how often watches get bookmarks. */
export interface MemberOptions {
  /** Default 5 s (a real server sends one about every minute). */
  readonly bookmarkIntervalMs?: number;
}

/** A resource request, parsed from the URL. */
export interface Target {
  readonly resource: ApiResource;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly subresource: string | undefined;
}

/**
 * What the API's handlers share: the object store, the custom resources CRDs added, the member's
 * options and clock, and the load its pods' metrics follow. Each group of handlers is a module of
 * functions over it (sim/api/: read, watch, write, patch, apply, CRDs), as the API server's
 * registry has a handler per verb.
 */
export interface ApiContext {
  readonly clusterName: string;
  readonly store: ObjectStore;
  readonly custom: ApiResource[];
  readonly options: MemberOptions;
  readonly load: readonly LoadRule[];
  /** What the containers wrote (the world writes, pods/log reads). */
  readonly logs: ContainerLogs;
  now(): Date;
  /** Every resource served. */
  resources(): readonly ApiResource[];
}
