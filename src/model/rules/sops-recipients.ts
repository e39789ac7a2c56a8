import type { RuleContext } from "./rule.js";

/**
 * Every sops-encrypted Secret names at least one of the age recipients fleet.yaml lists
 * (spec.sops.ageRecipients: the controller's and agents' public keys): a file only someone else
 * could open is refused at its recipients before merge, instead of failing at sync.
 */
export function checkSopsRecipients(context: RuleContext): void {
  const wanted = context.model.fleet?.spec.sops?.ageRecipients;
  if (!wanted || wanted.length === 0) return;
  const allowed = new Set(wanted);
  for (const app of context.model.apps)
    for (const resource of app.resources) {
      const envelope = resource.sealed?.envelope;
      if (!envelope || envelope.age.some((stanza) => allowed.has(stanza.recipient))) continue;
      context.reporter.report({
        origin: resource.origin,
        path: ["sops", "age"],
        code: "SOPS_RECIPIENTS",
        message: `encrypted to ${envelope.age.map((s) => s.recipient).join(", ")}, none of which the fleet opens with (fleet.yaml spec.sops.ageRecipients): encrypt it to one of those (sops updatekeys)`,
      });
    }
}
