import type { Json } from "../apimachinery/json.js";
import type { BatchChange, FieldChange, MigrationPlan, ObjectAdoption } from "./migration-plan.js";

/**
 * The migration part of a plan, as lines: each batch the change approves (starts at merge, or waits
 * behind which batch), and per app and cluster what adopting does to each
 * object — adopting unchanged, adopting and changing which fields (and whether pods restart),
 * creating — and that nothing is deleted; then what the change detaches.
 */
export function migrationLines(plan: MigrationPlan): string[] {
  const lines: string[] = [];
  for (const change of plan.batches) {
    lines.push(headline(change));
    if (change.action === "detaches") {
      for (const p of change.pairs) lines.push(`  ${p.app} in ${p.cluster}`);
      continue;
    }
    if (!plan.comparedWithLive)
      lines.push("  (what runs was not read: pass --kubeconfig to compare each object with the cluster)");
    for (const p of change.pairs) {
      const adoptions = plan.adoptions.filter((a) => a.app === p.app && a.cluster === p.cluster);
      lines.push(
        `  ${p.app} in ${p.cluster}:`,
        ...adoptions.flatMap((a) => adoptionLines(a).map((l) => `    ${l}`)),
      );
    }
    lines.push("  nothing is deleted: adopting never deletes");
  }
  return lines;
}

function headline(change: BatchChange): string {
  const name = change.batch ? `${change.migration}/${change.batch}` : change.migration;
  switch (change.action) {
    case "starts":
      return `${name} starts when merged (${change.reason}): its apps are adopted`;
    case "waits":
      return `${name} approved; it ${change.reason}, then starts: its apps are adopted`;
    default:
      return `${name} detaches (${change.reason}): gitfleet's labels go, the objects keep running, nothing is deleted`;
  }
}

function adoptionLines(a: ObjectAdoption): string[] {
  if (a.verdict === "unknown") return [`? ${a.object}: adopted if it runs, else created`];
  if (a.verdict === "create") return [`+ ${a.object}: not running here, created`];
  if (a.fields.length === 0) return [`= ${a.object}: adopted as it runs, no field changes`];
  return [
    `~ ${a.object}: adopted, changing ${a.fields.length} field${a.fields.length === 1 ? "" : "s"}${a.restartsPods ? " (the pod template changes: its pods restart)" : ""}`,
    ...a.fields.map((f) => `    ${fieldLine(f)}`),
  ];
}

function fieldLine(f: FieldChange): string {
  return `${f.path}: ${show(f.live)} → ${show(f.rendered)}`;
}

function show(value: Json | undefined): string {
  if (value === undefined) return "(unset)";
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
