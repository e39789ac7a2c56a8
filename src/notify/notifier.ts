import { stat } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "pino";
import type { Forge } from "../forge/forge.js";
import type { NotificationSink, NotificationsSpec } from "../model/types.js";
import { type FleetEvent, fleetEvents, type StatusCommitChange } from "../observe/fleet-events.js";
import { readConfiguredFile } from "../util/bounded-file.js";
import { type DeliveryOutcome, DeliveryQueue, type DeliveryQueueOptions } from "../util/delivery-queue.js";
import { deliverForgeStatus, deliverSlack, deliverWebhook } from "./deliveries.js";

export interface NotifierOptions {
  /** fleet.yaml's notifications as the last valid source commit has them (asked at each event). */
  readonly settings: () => NotificationsSpec | undefined;
  /** The operator's directory of sinks' files: <secretRef>.url, <secretRef>.signing-key. */
  readonly secretsDir?: string;
  /** The forge, for forgeStatus sinks (gitfleet run --commit-status's). */
  readonly forge?: Forge;
  /** The dashboard's base URL: forge statuses link to the status commit's page. */
  readonly dashboardUrl?: string;
  /** A status commit as events read it (git/status-commit-change.ts). */
  readonly readChange: (commit: string) => Promise<StatusCommitChange>;
  readonly logger: Logger;
  /** Queue bounds and backoff (tests shorten them). */
  readonly queue?: Omit<DeliveryQueueOptions<FleetEvent>, "deliver" | "onGiveUp" | "key">;
}

/** Bytes a sink's URL or signing key file may hold. */
const MAX_SECRET_FILE = 16 * 1024;

/**
 * Tells people what the status branch records: after each status commit this controller publishes,
 * its events (observe/fleet-events.ts) go to the sinks fleet.yaml routes them to, each sink through
 * its own queue. Nothing here is awaited by the loop; a sink's URL and key are read from the
 * operator's files at each delivery (a rotated Secret is used at once) and never logged.
 */
export class Notifier {
  private readonly queues = new Map<string, DeliveryQueue<FleetEvent>>();
  private reading: Promise<void> = Promise.resolve();

  constructor(private readonly options: NotifierOptions) {}

  /** A status commit was published: its events are read and queued, in commit order. */
  committed(commit: string): void {
    if ((this.options.settings()?.routes ?? []).length === 0) return;
    this.reading = this.reading
      .then(async () => this.route(fleetEvents(await this.options.readChange(commit))))
      .catch((error: unknown) =>
        this.options.logger.warn({ statusCommit: commit }, `events not read: ${(error as Error).message}`),
      );
  }

  /** Per sink ("notify/<name>"): what waits, what was dropped, what failed. */
  stats(): Map<string, { backlog: number; dropped: number; failed: number }> {
    return new Map(
      [...this.queues].map(([name, q]) => [
        `notify/${name}`,
        { backlog: q.backlog, dropped: q.dropped, failed: q.failed },
      ]),
    );
  }

  /** Waits until every queue is empty (tests). */
  async idle(): Promise<void> {
    await this.reading;
    await Promise.all([...this.queues.values()].map((q) => q.idle()));
  }

  stop(): void {
    for (const queue of this.queues.values()) queue.stop();
  }

  private route(events: readonly FleetEvent[]): void {
    const routes = this.options.settings()?.routes ?? [];
    for (const event of events) {
      const sinks = new Set(
        routes.filter((r) => r.events.includes("*") || r.events.includes(event.type)).flatMap((r) => r.sinks),
      );
      for (const sink of sinks) this.queue(sink).add(event);
    }
  }

  private queue(name: string): DeliveryQueue<FleetEvent> {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new DeliveryQueue<FleetEvent>({
        ...this.options.queue,
        deliver: (event) => this.deliver(name, event),
        onGiveUp: (event, reason) =>
          this.options.logger.warn(
            { sink: name, event: event.type, id: event.id },
            `notification given up: ${reason}`,
          ),
      });
      this.queues.set(name, queue);
    }
    return queue;
  }

  // One attempt at one sink, with the sink as fleet.yaml says it now.
  private async deliver(name: string, event: FleetEvent): Promise<DeliveryOutcome> {
    const sink = (this.options.settings()?.sinks ?? []).find((s) => s.name === name);
    if (!sink) return { kind: "failed", reason: `no sink named ${name} in fleet.yaml any more` };
    if (sink.type === "forgeStatus") {
      if (!this.options.forge)
        return { kind: "failed", reason: "forgeStatus needs gitfleet run --commit-status's forge" };
      const link = this.options.dashboardUrl
        ? `${this.options.dashboardUrl.replace(/\/+$/, "")}/#/commits/${event.statusCommit}`
        : undefined;
      return deliverForgeStatus(this.options.forge, event, link);
    }
    let secrets: { url: string; key: string | undefined };
    try {
      secrets = await this.secrets(sink);
    } catch (error) {
      // A missing file may be a Secret not mounted yet: tried again, like a receiver that is down.
      return { kind: "retry", reason: (error as Error).message };
    }
    return sink.type === "slack"
      ? deliverSlack(secrets.url, event)
      : deliverWebhook(secrets.url, secrets.key, event);
  }

  private async secrets(sink: NotificationSink): Promise<{ url: string; key: string | undefined }> {
    const dir = this.options.secretsDir;
    if (!dir || !sink.secretRef)
      throw new Error(`sink ${sink.name}: no --notification-secrets-dir to read its URL from`);
    const read = async (file: string) =>
      Buffer.from(await readConfiguredFile(join(dir, file), `sink ${sink.name}'s ${file}`, MAX_SECRET_FILE))
        .toString("utf8")
        .trim();
    const url = await read(`${sink.secretRef}.url`);
    if (!/^https?:\/\/[^\s]+$/.test(url))
      throw new Error(`sink ${sink.name}'s ${sink.secretRef}.url is not an http(s) URL`);
    const keyFile = `${sink.secretRef}.signing-key`;
    const hasKey =
      sink.type === "webhook" &&
      (await stat(join(dir, keyFile)).then(
        () => true,
        () => false,
      ));
    const key = hasKey ? await read(keyFile) : undefined;
    if (key === "") throw new Error(`sink ${sink.name}'s ${keyFile} is empty`);
    return { url, key };
  }
}
