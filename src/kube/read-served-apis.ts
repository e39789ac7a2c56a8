import type { ServedApis } from "../model/served-apis.js";
import type { MemberClient } from "./member-client.js";

/** Discovery is read again after this long (10 minutes), or at once after gitfleet applied a CRD. */
export const SERVED_APIS_INTERVAL_MS = 10 * 60_000;

/**
 * What each member serves, from discovery, read at most once per interval — APIs change when CRDs
 * are installed or the cluster is upgraded, not between syncs — and at once when `fresh` is asked
 * (a sync applied CRDs and saw them Established). A reading that fails keeps the last good one.
 */
export class ServedApiReadings {
  private readonly last = new Map<string, { at: number; value: Promise<ServedApis | undefined> }>();
  private readonly good = new Map<string, ServedApis>();

  constructor(private readonly now: () => number = () => Date.now()) {}

  read(
    client: Pick<MemberClient, "cluster" | "servedApis">,
    intervalMs = SERVED_APIS_INTERVAL_MS,
    fresh = false,
  ): Promise<ServedApis | undefined> {
    const now = this.now();
    const last = this.last.get(client.cluster);
    if (last && !fresh && now - last.at < intervalMs) return last.value;
    const value = client.servedApis().then(
      (apis) => {
        this.good.set(client.cluster, apis);
        return apis;
      },
      () => this.good.get(client.cluster),
    );
    this.last.set(client.cluster, { at: now, value });
    return value;
  }
}
