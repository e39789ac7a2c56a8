import { asMap, type JsonMap } from "../../apimachinery/json.js";
import { timestamp } from "../api/helpers.js";
import type { MemberApi } from "../member-api.js";

/**
 * The events the member's controllers, scheduler and kubelet record, as core/v1 Events in the
 * involved object's namespace — what `kubectl get events` and `kubectl describe` show. Two recorders,
 * as in Kubernetes: the kubelet and kube-controller-manager's controllers count repeats of the same
 * event (client-go's record package: `count`, `firstTimestamp`, `lastTimestamp`); the scheduler uses
 * the events API (`eventTime`, `reportingController`, `action`, and a `series` once it repeats).
 * Events live for the event TTL (an hour by default, as kube-apiserver's --event-ttl), then are
 * collected.
 */

/** Who records: a component and, for the kubelet, its node. */
export interface EventSource {
  readonly component: string;
  readonly host?: string;
}

export interface RecordedEvent {
  readonly type: "Normal" | "Warning";
  readonly reason: string;
  readonly message: string;
  /** spec.containers{main}, for a container's events. */
  readonly fieldPath?: string;
  /** Recorded through the events API (the scheduler's): with the action it took. */
  readonly action?: string;
}

const EVENTS_PATH = (namespace: string) => `/api/v1/namespaces/${namespace}/events`;

export class EventRecorder {
  /** The Event each distinct event was recorded as (forgotten when collected). */
  private readonly names = new Map<string, string>();
  private readonly keys = new Map<string, string>();
  private lastNanos = 0n;
  constructor(
    private readonly api: MemberApi,
    private readonly ttlMs = 3_600_000,
  ) {}

  /** Records one event about `object`; the same event again counts up instead of adding one. */
  record(object: JsonMap, source: EventSource, event: RecordedEvent): void {
    const metadata = asMap(object.metadata);
    const namespace = typeof metadata.namespace === "string" ? metadata.namespace : "default";
    const involved = involvedObject(object, event.fieldPath);
    // The same event again (object, source, reason, message) updates the Event it made; a new one is
    // named as client-go names it, after the object and the time in hex, so they list in order.
    const key = [
      involved.uid,
      involved.kind,
      source.component,
      source.host ?? "",
      event.type,
      event.reason,
      event.message,
      event.fieldPath ?? "",
    ].join("\0");
    const now = this.api.now();
    const known = this.names.get(key);
    const name = known ?? `${involved.name}.${this.uniqueSuffix(now)}`;
    // Only an event recorded before can be there to count up (a new name is never taken).
    const found =
      known === undefined
        ? undefined
        : this.api.handle({
            method: "GET",
            path: `${EVENTS_PATH(namespace)}/${name}`,
            query: new URLSearchParams(),
            contentType: "",
            body: undefined,
          });
    const existing = found?.status === 200 ? asMap(found.body) : undefined;
    if (existing && event.action) this.repeatSeries(existing, namespace, name, now);
    else if (existing)
      this.patch(namespace, name, { count: Number(existing.count ?? 1) + 1, lastTimestamp: timestamp(now) });
    else {
      this.create(namespace, { name, involved, source, event, now });
      this.names.set(key, name);
      this.keys.set(name, key);
    }
  }

  // Nanoseconds since the epoch in hex, one more than the last when the clock has not moved.
  private uniqueSuffix(now: Date): string {
    const nanos = BigInt(now.getTime()) * 1_000_000n;
    this.lastNanos = nanos > this.lastNanos ? nanos : this.lastNanos + 1n;
    return this.lastNanos.toString(16);
  }

  /** Removes the events last seen longer ago than the TTL. */
  collect(): void {
    const events = asMap(
      this.api.handle({
        method: "GET",
        path: "/api/v1/events",
        query: new URLSearchParams(),
        contentType: "",
        body: undefined,
      }).body,
    );
    const cutoff = this.api.now().getTime() - this.ttlMs;
    for (const item of (events.items as JsonMap[] | undefined) ?? []) {
      const last = lastSeen(item);
      if (Number.isNaN(last) || last >= cutoff) continue;
      const { namespace, name } = asMap(item.metadata);
      const key = this.keys.get(String(name));
      if (key !== undefined) this.names.delete(key);
      this.keys.delete(String(name));
      this.api.handle({
        method: "DELETE",
        path: `${EVENTS_PATH(String(namespace))}/${String(name)}`,
        query: new URLSearchParams(),
        contentType: "",
        body: undefined,
      });
    }
  }

  private create(
    namespace: string,
    input: { name: string; involved: JsonMap; source: EventSource; event: RecordedEvent; now: Date },
  ): void {
    const { name, involved, source, event, now } = input;
    const instance = source.host ?? `${source.component}-${this.api.clusterName}`;
    const common = {
      apiVersion: "v1",
      kind: "Event",
      metadata: { name, namespace },
      involvedObject: involved,
      reason: event.reason,
      message: event.message,
      type: event.type,
      reportingComponent: source.component,
      reportingInstance: instance,
    };
    // The events API's event: a precise time and the action; the legacy recorder's: a count and two times.
    const body = event.action
      ? {
          ...common,
          eventTime: microTime(now),
          action: event.action,
          source: {},
          firstTimestamp: null,
          lastTimestamp: null,
        }
      : {
          ...common,
          count: 1,
          firstTimestamp: timestamp(now),
          lastTimestamp: timestamp(now),
          source: { component: source.component, ...(source.host ? { host: source.host } : {}) },
          eventTime: null,
          reportingInstance: source.host ?? "",
        };
    this.api.handle({
      method: "POST",
      path: EVENTS_PATH(namespace),
      query: new URLSearchParams(),
      contentType: "application/json",
      body,
    });
  }

  private repeatSeries(existing: JsonMap, namespace: string, name: string, now: Date): void {
    const series = asMap(existing.series);
    this.patch(namespace, name, {
      series: { count: Number(series.count ?? 1) + 1, lastObservedTime: microTime(now) },
    });
  }

  private patch(namespace: string, name: string, body: JsonMap): void {
    this.api.handle({
      method: "PATCH",
      path: `${EVENTS_PATH(namespace)}/${name}`,
      query: new URLSearchParams(),
      contentType: "application/merge-patch+json",
      body,
    });
  }
}

// The reference an event keeps to what it is about.
function involvedObject(object: JsonMap, fieldPath: string | undefined): Record<string, string> {
  const metadata = asMap(object.metadata);
  const text = (value: unknown) => (value === undefined || value === null ? "" : String(value));
  return {
    kind: text(object.kind),
    namespace: text(metadata.namespace),
    name: text(metadata.name),
    uid: text(metadata.uid),
    apiVersion: text(object.apiVersion),
    resourceVersion: text(metadata.resourceVersion),
    ...(fieldPath ? { fieldPath } : {}),
  };
}

// When an event was last seen, in ms since the epoch.
function lastSeen(event: JsonMap): number {
  const series = asMap(event.series);
  const at = series.lastObservedTime ?? event.lastTimestamp ?? event.eventTime ?? event.firstTimestamp;
  return typeof at === "string" ? Date.parse(at) : Number.NaN;
}

// A MicroTime: RFC 3339 with microseconds.
function microTime(at: Date): string {
  return at.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}
