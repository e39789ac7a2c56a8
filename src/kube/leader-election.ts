import type { Logger } from "pino";
import type { JsonMap } from "../apimachinery/json.js";
import {
  firstLeaseSpec,
  type LeaseRecord,
  nextLeaseStep,
  RELAYED_TRIGGER_ANNOTATION,
  readLeaseRecord,
  releasedSpec,
  sameLeaseRecord,
} from "./lease-record.js";
import { MemberApiError } from "./member-client.js";

/** client-go's defaults (kube-controller-manager's too): a claim lasts 15 s, is renewed every 2 s and given up after 10 s without a renewal. */
export const LEADER_ELECTION_DEFAULTS = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
} as const;

/** The timings of an election; the renew deadline is shorter than the lease so a holder stops before others may start. */
export interface LeaseTimings {
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
}

/** The part of a Kubernetes client an election needs: raw requests by path. */
export interface LeaseApi {
  raw(method: string, path: string, body?: unknown, contentType?: string): Promise<unknown>;
}

export interface LeaderElectionOptions extends LeaseTimings {
  readonly api: LeaseApi;
  readonly namespace: string;
  readonly name: string;
  /** Unique per process: two processes with one identity would both believe they lead. */
  readonly identity: string;
  readonly logger: Logger;
  /** This process's monotonic clock in milliseconds (default process.hrtime), and the wall clock for the record. */
  readonly monotonicMs?: () => number;
  readonly now?: () => Date;
  /** Told the monotonic time each successful write of the Lease was *sent* (the fence counts from it). */
  readonly onRenewed?: (sentAtMs: number) => void;
  /** Told, while leading, of a round a standby relayed (see `relay`); the next renewal clears it. */
  readonly onRelayed?: (reason: string) => void;
  /** Asked before each try to take the Lease (never before a renewal): false waits a retry period (shards balance with it). */
  readonly mayAcquire?: () => boolean;
  /** Told whenever the holder named in the record read changes ("" when nobody holds it). */
  readonly onObserved?: (holder: string) => void;
}

/** Whether timings are ones an election can keep: lease > renew deadline > retry period (× 1.2 jitter) > 0. */
export function timingsProblem(timings: LeaseTimings): string | undefined {
  const { leaseDurationMs: lease, renewDeadlineMs: deadline, retryPeriodMs: retry } = timings;
  if (!(retry > 0)) return "the retry period must be positive";
  if (!(deadline > retry * 1.2))
    return "the renew deadline must be longer than 1.2 × the retry period (client-go's jitter)";
  if (!(lease > deadline)) return "the lease duration must be longer than the renew deadline";
  return undefined;
}

/** The monotonic clock of this process, shared by its threads (CLOCK_MONOTONIC). */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint() / 1_000_000n);
}

/**
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it: a
 * candidate reads the Lease every retry period and takes it once the holder's claim has expired by
 * its own clock (or the holder released it); the leader renews every retry period with a
 * compare-and-swap on resourceVersion and counts itself leading only until the renew deadline has
 * passed since the last renewal it sent. Since the deadline is shorter than the lease, a leader that
 * is stopped, partitioned or paused stops counting itself leading before any other candidate may
 * take over — the fence every write checks (`leading`).
 */
export class LeaderElector {
  private renewedAtMs: number | undefined;
  private observed: LeaseRecord | undefined;
  private observedAtMs = 0;
  private stopped = false;
  private wake: (() => void) | undefined;
  /** The read-and-write in flight, which a release waits for (its renewal must not land after). */
  private inFlight: Promise<unknown> | undefined;
  private readonly clock: () => number;

  constructor(private readonly options: LeaderElectionOptions) {
    this.clock = options.monotonicMs ?? monotonicMs;
  }

  /** True while the last renewal sent is younger than the renew deadline. */
  get leading(): boolean {
    return this.renewedAtMs !== undefined && this.clock() - this.renewedAtMs < this.options.renewDeadlineMs;
  }

  /** Who holds the Lease as last read (for logs and /readyz). */
  get holder(): string | undefined {
    return this.observed?.holder || undefined;
  }

  /**
   * Campaigns until this candidate holds the Lease, tells `started`, renews while it leads, and tells
   * `stopped` once it no longer does (a renewal missed its deadline) — or returns when stopped.
   */
  async run(events: { readonly started: () => void; readonly stopped: () => void }): Promise<void> {
    if (!(await this.acquire())) return;
    events.started();
    await this.hold();
    if (!this.stopped) events.stopped();
  }

  /** Ends the campaign or the renewals; a leader stays leading until its deadline unless it releases. */
  stop(): void {
    this.stopped = true;
    this.wake?.();
  }

  /** Gives the Lease up at once (a graceful stop), so another candidate need not wait for it to expire. */
  async release(): Promise<void> {
    await this.inFlight;
    const leading = this.leading;
    this.renewedAtMs = undefined;
    if (!leading || !this.observed) return;
    await this.write(this.observed, releasedSpec(this.observed, this.wallClock())).catch((error: unknown) =>
      this.options.logger.warn({ error: String(error) }, "leader lease not released; it expires instead"),
    );
  }

  /**
   * Passes a round on to the leader (a standby that a webhook reached): an annotation on the Lease,
   * which the leader reads at its next renewal — within a retry period — and clears by renewing.
   */
  async relay(reason: string): Promise<void> {
    await this.options.api.raw(
      "PATCH",
      this.path(),
      {
        metadata: {
          annotations: {
            [RELAYED_TRIGGER_ANNOTATION]: `${reason.slice(0, 100)} ${this.wallClock().toISOString()}`,
          },
        },
      },
      "application/merge-patch+json",
    );
  }

  // Tries every retry period (jittered) until the Lease is this candidate's.
  private async acquire(): Promise<boolean> {
    const { logger, namespace, name, identity } = this.options;
    let waitingFor: string | undefined;
    while (!this.stopped) {
      if (this.options.mayAcquire?.() === false) {
        // Not trying, but watching: the holder's claim is timed from when its record last changed, so
        // a candidate that may try later takes an expired Lease at once rather than a lease later.
        await this.observe().catch(() => undefined);
        await this.sleep(this.options.retryPeriodMs * (1 + Math.random() * 0.2));
        continue;
      }
      const outcome = await this.attemptOnce().catch((error: unknown) => {
        logger.warn({ error: String(error) }, "leader lease not read or written; trying again");
        return undefined;
      });
      if (outcome === true) {
        logger.info({ lease: `${namespace}/${name}`, identity }, "leading");
        return true;
      }
      if (typeof outcome === "string" && outcome !== waitingFor) {
        waitingFor = outcome;
        logger.info({ lease: `${namespace}/${name}`, holder: outcome }, "standing by: another replica leads");
      }
      await this.sleep(this.options.retryPeriodMs * (1 + Math.random() * 0.2));
    }
    return false;
  }

  // Renews every retry period while the deadline holds.
  private async hold(): Promise<void> {
    const { logger, namespace, name } = this.options;
    while (!this.stopped && this.leading) {
      await this.sleep(this.options.retryPeriodMs);
      if (this.stopped || !this.leading) break;
      const outcome = await this.attemptOnce().catch((error: unknown) => {
        logger.warn({ error: String(error) }, "leader lease not renewed; trying again");
        return undefined;
      });
      if (typeof outcome === "string") {
        // Someone else holds it: this process's claim is over whatever its deadline says.
        this.renewedAtMs = undefined;
        break;
      }
    }
    if (!this.stopped) logger.error({ lease: `${namespace}/${name}` }, "leader lease lost");
  }

  // One read and, when the step says so, one write: true once written, the holder's name while it
  // holds, undefined when the write lost a race.
  private async tryAcquireOrRenew(): Promise<true | string | undefined> {
    const sentAtMs = this.clock();
    const current = await this.read();
    if (!current) {
      if (!(await this.create())) return undefined;
      this.renewed(sentAtMs);
      return true;
    }
    this.noticed(current);
    const step = nextLeaseStep({
      record: current,
      identity: this.options.identity,
      durationSeconds: Math.ceil(this.options.leaseDurationMs / 1000),
      observedAtMs: this.observedAtMs,
      nowMs: this.clock(),
      now: this.wallClock(),
    });
    if (step.action === "wait") return step.holder;
    const written = await this.write(current, step.spec);
    if (!written) return undefined;
    this.renewed(sentAtMs);
    // The write carried no annotations, so a relayed round is told once.
    if (current.relayed) this.options.onRelayed?.(current.relayed);
    return true;
  }

  // One try, remembered while it runs.
  private attemptOnce(): Promise<true | string | undefined> {
    const attempt = this.tryAcquireOrRenew();
    this.inFlight = attempt.catch(() => undefined);
    return attempt;
  }

  // A renewal landed. Once stopped, the fence is not told: a stopping replica writes nothing more
  // (its release, or the lease's expiry, ends the claim).
  private renewed(sentAtMs: number): void {
    this.renewedAtMs = sentAtMs;
    if (!this.stopped) this.options.onRenewed?.(sentAtMs);
  }

  // A record read: when it changed, the holder's claim is timed from now (this process's clock).
  private noticed(current: LeaseRecord): void {
    if (!sameLeaseRecord(this.observed, current)) {
      const before = this.observed?.holder;
      this.observed = current;
      this.observedAtMs = this.clock();
      if (before !== current.holder) this.options.onObserved?.(current.holder);
    }
  }

  // One read of the Lease, only to notice its changes.
  private async observe(): Promise<void> {
    const current = await this.read();
    if (current) this.noticed(current);
  }

  private async read(): Promise<LeaseRecord | undefined> {
    try {
      return readLeaseRecord(await this.options.api.raw("GET", this.path()));
    } catch (error) {
      if (error instanceof MemberApiError && error.code === 404) return undefined;
      throw error;
    }
  }

  // The first claim on a Lease nobody made yet; false when another candidate created it first.
  private create(): Promise<boolean> {
    const spec = firstLeaseSpec(
      this.options.identity,
      Math.ceil(this.options.leaseDurationMs / 1000),
      this.wallClock(),
    );
    return this.send("POST", this.path(false), { ...this.object(undefined), spec });
  }

  // A compare-and-swap on resourceVersion: false when another writer got there first (409).
  private write(current: LeaseRecord, spec: JsonMap): Promise<boolean> {
    return this.send("PUT", this.path(), { ...this.object(current.resourceVersion), spec });
  }

  // One write of the Lease, its answer observed; false on a conflict (409: another writer was first).
  private async send(method: "POST" | "PUT", path: string, body: JsonMap): Promise<boolean> {
    try {
      this.observed = readLeaseRecord(await this.options.api.raw(method, path, body));
      this.observedAtMs = this.clock();
      return true;
    } catch (error) {
      if (error instanceof MemberApiError && error.code === 409) return false;
      throw error;
    }
  }

  private object(resourceVersion: string | undefined): JsonMap {
    const { namespace, name } = this.options;
    return {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name, namespace, ...(resourceVersion ? { resourceVersion } : {}) },
    };
  }

  private path(named = true): string {
    const { namespace, name } = this.options;
    const base = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`;
    return named ? `${base}/${encodeURIComponent(name)}` : base;
  }

  private wallClock(): Date {
    return this.options.now?.() ?? new Date();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}
