import { createHmac } from "node:crypto";
import type { Forge, StatusState } from "../forge/forge.js";
import { escapeHtml } from "../model/one-line.js";
import type { FleetEvent, FleetEventType } from "../observe/fleet-events.js";
import { readBoundedResponse } from "../util/bounded-response.js";
import type { DeliveryOutcome } from "../util/delivery-queue.js";

/** The header naming the delivery: the same for every retry of one event, so a receiver takes it once. */
export const DELIVERY_HEADER = "x-gitfleet-delivery";
/** The body's HMAC-SHA256 under the sink's signing key, hex, as `sha256=<hex>`. */
export const SIGNATURE_HEADER = "x-gitfleet-signature-256";

const TIMEOUT_MS = 10_000;

/** The JSON a webhook receives: the event as it is. */
export function webhookBody(event: FleetEvent): string {
  return JSON.stringify({ ...event });
}

/** The signature header's value for a body under a key. */
export function webhookSignature(key: string, body: string): string {
  return `sha256=${createHmac("sha256", key).update(body).digest("hex")}`;
}

/**
 * POSTs the event as JSON, signed when the sink has a key, with its id as the idempotency key
 * (X-Gitfleet-Delivery and Idempotency-Key). 2xx is delivered; 408, 429, 5xx and an unreachable
 * receiver are tried again; any other answer is final.
 */
export async function deliverWebhook(
  url: string,
  key: string | undefined,
  event: FleetEvent,
): Promise<DeliveryOutcome> {
  const body = webhookBody(event);
  return post(url, body, {
    "x-gitfleet-event": event.type,
    [DELIVERY_HEADER]: event.id,
    "idempotency-key": event.id,
    ...(key ? { [SIGNATURE_HEADER]: webhookSignature(key, body) } : {}),
  });
}

/** Posts the event's line to a Slack-compatible incoming webhook ({"text": …}). */
export async function deliverSlack(url: string, event: FleetEvent): Promise<DeliveryOutcome> {
  return post(url, JSON.stringify({ text: slackText(event) }), {});
}

/** The line a chat gets: what happened, and the status commit that records it. */
export function slackText(event: FleetEvent): string {
  return `gitfleet ${event.type}: ${escapeHtml(event.summary)} (status commit ${event.statusCommit.slice(0, 12)})`;
}

// What a forge's commit status says of each event: trouble fails, recovery and routine succeed.
const STATUS_OF: Record<FleetEventType, StatusState> = {
  sourceInvalid: "failure",
  failover: "success",
  clusterNotReady: "failure",
  clusterReady: "success",
  rolloutHalted: "failure",
  pruneBlocked: "failure",
  migrationBatchFailed: "failure",
  migrationBatchSucceeded: "success",
  autoscale: "success",
  certificateExpiring: "failure",
  etcdAlarm: "failure",
};

/** Puts the event on its source commit as a commit status, context gitfleet/<event>. */
export async function deliverForgeStatus(
  forge: Forge,
  event: FleetEvent,
  targetUrl?: string,
): Promise<DeliveryOutcome> {
  if (!event.sourceCommit) return { kind: "failed", reason: "the event names no source commit" };
  try {
    await forge.setStatus({
      sha: event.sourceCommit,
      state: STATUS_OF[event.type],
      context: `gitfleet/${event.type}`,
      description: event.summary,
      ...(targetUrl ? { targetUrl } : {}),
    });
    return { kind: "delivered" };
  } catch (error) {
    // The forge client already retried rate limits and server errors; what is left is final.
    return { kind: "failed", reason: (error as Error).message };
  }
}

async function post(url: string, body: string, headers: Record<string, string>): Promise<DeliveryOutcome> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": "gitfleet", ...headers },
      body,
      redirect: "error",
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    return { kind: "retry", reason: `cannot reach the receiver: ${(error as Error).message}` };
  }
  // The answer is read only to free the connection, and only a little of it.
  await readBoundedResponse(response, 64 * 1024).catch(() => "");
  if (response.ok) return { kind: "delivered" };
  const status = response.status;
  if (status === 408 || status === 429 || status >= 500) return { kind: "retry", reason: `HTTP ${status}` };
  return { kind: "failed", reason: `HTTP ${status}` };
}
