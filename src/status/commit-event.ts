import type { EventKind } from "../model/trailers.js";

/**
 * The event a status commit's message records, from the message gitfleet composed (its subject, and
 * for a sync whether it applied anything): what the writer puts in the Gitfleet-Event trailer.
 */
export function commitEventKind(message: string): EventKind {
  const [subject = "", ...body] = message.split("\n");
  if (subject.startsWith("failover:")) return "failover";
  if (subject.startsWith("autoscale:")) return "scale";
  if (subject.startsWith("upgrade:")) return "upgrade";
  if (/^Source [0-9a-f]+ is invalid/.test(subject)) return "invalid";
  if (/^agent \S+:/.test(subject)) return "agent";
  if (subject.startsWith("sync:")) {
    if (subject.includes("; migration:")) return "migration";
    if (subject.includes("; upgrade:")) return "upgrade";
    return body.some((line) => /: [1-9][0-9]* applied/.test(line)) ? "rollout" : "sync";
  }
  return "reconcile";
}
