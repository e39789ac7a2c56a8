import type { Gate } from "../migrate/migration-state.js";
import type { DesiredObject } from "./desired-objects.js";
import type { Hold } from "./sync-result.js";

/**
 * One cluster's objects and holds with migrations' gates applied: apps a batch has not started are
 * held (left as they run, never created or adopted), apps a started batch covers are adopted, apps
 * to detach are held and listed.
 */
export function applyGates(
  desired: readonly DesiredObject[],
  holds: ReadonlyMap<string, string> | undefined,
  gates: ReadonlyMap<string, Gate> | undefined,
): { desired: DesiredObject[]; held: Map<string, Hold>; detach: string[] } {
  const held = new Map<string, Hold>(
    [...(holds ?? [])].map(([app, reason]) => [app, { reason, by: "rollout" }]),
  );
  const detach: string[] = [];
  if (!gates) return { desired: [...desired], held, detach };
  for (const [app, gate] of gates) {
    if (gate.action === "sync") continue;
    held.set(app, { reason: gate.reason, by: "migration" });
    if (gate.action === "detach") detach.push(app);
  }
  // A started batch adopts what already runs, unless its Migration says conflictResolution: Abort.
  const adopted = desired.map((d) => {
    const gate = gates.get(d.app);
    return gate?.action === "sync" && gate.adopt ? { ...d, policy: { ...d.policy, adopt: true } } : d;
  });
  return { desired: adopted, held, detach };
}
