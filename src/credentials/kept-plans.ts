import { createHash } from "node:crypto";
import type { HostedControlPlane } from "../model/controlplane/hosted-control-plane.js";

/** A credentials plan that wrote nothing, with the input it was made from, until its first renewal is due. */
interface KeptPlan<P> {
  readonly plan: P;
  /** The first instant (ms) at which a credential it keeps is due for renewal. */
  readonly until: number;
}

/**
 * Plans that changed nothing, by a digest of everything the plan reads but the time: the control
 * plane, the Secrets the host holds and a shared etcd's CA. Such a plan is the same at any later
 * instant before its first renewal is due (nothing else in it depends on the time), so a host's
 * steady passes skip parsing and checking a dozen keys and certificates per control plane. Bounded:
 * the least recently used goes first.
 */
export class KeptPlans<P> {
  private readonly plans = new Map<string, KeptPlan<P>>();

  constructor(private readonly capacity: number) {}

  /** The digest of a plan's inputs. */
  static key(
    plane: HostedControlPlane,
    existing: ReadonlyMap<string, Readonly<Record<string, string>>>,
    etcdCa: { readonly pem: string; readonly changed: boolean } | undefined,
  ): string {
    const secrets = [...existing].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return createHash("sha256")
      .update(JSON.stringify([plane, secrets, etcdCa ?? null]))
      .digest("hex");
  }

  /** The kept plan for these inputs, if one was made and no renewal is due at `now`. */
  get(key: string, now: number): P | undefined {
    const kept = this.plans.get(key);
    if (!kept) return undefined;
    this.plans.delete(key);
    if (now >= kept.until) return undefined;
    this.plans.set(key, kept);
    return kept.plan;
  }

  /** Remembers a plan that wrote nothing, valid before `until`. */
  set(key: string, plan: P, until: number): void {
    this.plans.delete(key);
    this.plans.set(key, { plan, until });
    if (this.plans.size > this.capacity) this.plans.delete(this.plans.keys().next().value as string);
  }

  get size(): number {
    return this.plans.size;
  }
}
