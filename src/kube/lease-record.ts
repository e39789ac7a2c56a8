import { asMap, type JsonMap } from "../apimachinery/json.js";

/**
 * What a coordination.k8s.io/v1 Lease says about who leads, as client-go's resourcelock reads it:
 * the holder, how long its claim lasts, when it was taken and last renewed, and how often it changed
 * hands. The resourceVersion makes the next write a compare-and-swap.
 */
export interface LeaseRecord {
  readonly holder: string;
  readonly durationSeconds: number;
  readonly acquireTime: string | undefined;
  readonly renewTime: string | undefined;
  readonly transitions: number;
  readonly resourceVersion: string;
  /** A round a standby asked the leader for (a webhook that reached it), until the leader's next write clears it. */
  readonly relayed: string | undefined;
}

/** The annotation on the Lease by which a standby passes a round it was asked for on to the leader. */
export const RELAYED_TRIGGER_ANNOTATION = "gitfleet.io/relayed-trigger";

/** The Lease as the API server answered it (a member's answer is untrusted: bounded, typed). */
export function readLeaseRecord(object: unknown): LeaseRecord {
  const spec = asMap(asMap(object).spec);
  const metadata = asMap(asMap(object).metadata);
  const text = (value: unknown) => (typeof value === "string" ? value.slice(0, 256) : undefined);
  const count = (value: unknown) =>
    typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : 0;
  return {
    holder: text(spec.holderIdentity) ?? "",
    durationSeconds: count(spec.leaseDurationSeconds),
    acquireTime: text(spec.acquireTime),
    renewTime: text(spec.renewTime),
    transitions: count(spec.leaseTransitions),
    resourceVersion: text(metadata.resourceVersion) ?? "",
    relayed: text(asMap(metadata.annotations)[RELAYED_TRIGGER_ANNOTATION]),
  };
}

/** What a candidate does next with a Lease it has just read. */
export type LeaseStep =
  | { readonly action: "wait"; readonly holder: string }
  | { readonly action: "renew" | "acquire"; readonly spec: JsonMap };

/**
 * client-go's tryAcquireOrRenew as a function of data. Another holder's claim stands until
 * `durationSeconds` after this candidate *observed* the record change (its own clock, never the
 * holder's timestamps: clocks of different machines differ); an empty holder (released) or an expired
 * claim may be taken; the holder renews keeping its acquire time. `now` is the wall clock, for the
 * record's timestamps; `observedAtMs` and `nowMs` are this process's monotonic clock.
 */
export function nextLeaseStep(input: {
  readonly record: LeaseRecord;
  readonly identity: string;
  readonly durationSeconds: number;
  readonly observedAtMs: number;
  readonly nowMs: number;
  readonly now: Date;
}): LeaseStep {
  const { record, identity, now } = input;
  const held = record.holder !== "" && record.holder !== identity;
  if (held && input.observedAtMs + record.durationSeconds * 1000 > input.nowMs)
    return { action: "wait", holder: record.holder };
  const mine = record.holder === identity;
  return {
    action: mine ? "renew" : "acquire",
    spec: {
      holderIdentity: identity,
      leaseDurationSeconds: input.durationSeconds,
      acquireTime: mine && record.acquireTime ? record.acquireTime : microTime(now),
      renewTime: microTime(now),
      leaseTransitions: mine ? record.transitions : record.transitions + 1,
    },
  };
}

/** The first claim on a Lease that does not exist yet. */
export function firstLeaseSpec(identity: string, durationSeconds: number, now: Date): JsonMap {
  return {
    holderIdentity: identity,
    leaseDurationSeconds: durationSeconds,
    acquireTime: microTime(now),
    renewTime: microTime(now),
    leaseTransitions: 0,
  };
}

/** A released Lease: no holder, so any candidate takes it at once (client-go's ReleaseOnCancel). */
export function releasedSpec(record: LeaseRecord, now: Date): JsonMap {
  return {
    holderIdentity: "",
    leaseDurationSeconds: 1,
    acquireTime: microTime(now),
    renewTime: microTime(now),
    leaseTransitions: record.transitions,
  };
}

/** Whether two reads of a Lease are the same record (a renewal changes renewTime, so it is a change). */
export function sameLeaseRecord(a: LeaseRecord | undefined, b: LeaseRecord): boolean {
  return (
    a !== undefined &&
    a.holder === b.holder &&
    a.renewTime === b.renewTime &&
    a.acquireTime === b.acquireTime &&
    a.transitions === b.transitions &&
    a.durationSeconds === b.durationSeconds
  );
}

/** Kubernetes' MicroTime: RFC 3339 with microseconds, in UTC. */
export function microTime(at: Date): string {
  return at.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}
