import type { NotificationSink } from "../types.js";
import type { RuleContext } from "./rule.js";

type Finding = Omit<Parameters<RuleContext["reporter"]["report"]>[0], "origin">;

/**
 * fleet.yaml's notifications hold together: sink names are unique, a webhook or Slack sink names
 * the operator's files it reads (secretRef), and every route's sinks exist.
 */
export function checkNotifications({ model, reporter }: RuleContext): void {
  const fleet = model.fleet;
  const notifications = fleet?.spec.notifications;
  if (!fleet || !notifications) return;
  const names = new Set<string>();
  const findings: Finding[] = [];
  for (const [i, sink] of (notifications.sinks ?? []).entries()) {
    findings.push(...sinkFindings(sink, ["spec", "notifications", "sinks", i], names.has(sink.name)));
    names.add(sink.name);
  }
  for (const [i, route] of (notifications.routes ?? []).entries())
    for (const [j, sink] of route.sinks.entries())
      if (!names.has(sink))
        findings.push({
          path: ["spec", "notifications", "routes", i, "sinks", j],
          code: "UNKNOWN_REFERENCE",
          message: `no sink named "${sink}" in spec.notifications.sinks`,
        });
  for (const finding of findings) reporter.report({ origin: fleet.origin, ...finding });
}

function sinkFindings(sink: NotificationSink, at: (string | number)[], duplicate: boolean): Finding[] {
  const findings: Finding[] = [];
  if (duplicate)
    findings.push({
      path: [...at, "name"],
      code: "DUPLICATE_NAME",
      message: `a second sink named "${sink.name}"`,
    });
  if (sink.type !== "forgeStatus" && sink.secretRef === undefined)
    findings.push({
      path: at,
      code: "MISSING_FIELD",
      message: `a ${sink.type} sink needs secretRef: the operator's file <secretRef>.url in --notification-secrets-dir holds its URL`,
    });
  if (sink.type === "forgeStatus" && sink.secretRef !== undefined)
    findings.push({
      path: [...at, "secretRef"],
      code: "INVALID_FIELD_COMBINATION",
      message:
        "a forgeStatus sink posts with the controller's forge token (--commit-status): it has no secretRef",
    });
  return findings;
}
