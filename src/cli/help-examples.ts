import type { Command } from "commander";

/**
 * Examples for each command's --help, by the command's path: what people run most, with the flags
 * they use. A test checks that every command has some and that every flag they name is the
 * command's own.
 */
export const HELP_EXAMPLES: Readonly<Record<string, readonly string[]>> = {
  validate: [
    "gitfleet validate .",
    "gitfleet validate example-repo --strict -o json",
    "gitfleet validate . --team-source https://git.example.com/games/=/etc/gitfleet/games-token",
  ],
  schedule: ["gitfleet schedule < docs/examples/schedule-problem.json"],
  render: [
    "gitfleet render . --out /tmp/fleet",
    "gitfleet render . --out - --cluster aws-use1 | kubectl diff -f -",
  ],
  plan: [
    "gitfleet plan --repo . --base origin/main --head HEAD",
    "gitfleet plan --repo . --base main --head my-change --format markdown --post --pull-request 42",
  ],
  reconcile: ["gitfleet reconcile --repo . --once --kubeconfig ~/.kube/members"],
  run: [
    "gitfleet run --repo https://github.com/example/fleet.git --token-file /etc/gitfleet/git/git-token --kubeconfig ~/.kube/members",
    "gitfleet run --repo . --listen 0.0.0.0:8080 --oidc-issuer https://gitea.example.com --oidc-client-id gitfleet --oidc-client-secret-file client-secret --public-url https://fleet.example.com",
  ],
  agent: [
    "gitfleet agent --repo https://github.com/example/fleet.git --cluster idc-west-1 --trusted-keys /etc/gitfleet/allowed-signers",
  ],
  join: [
    "gitfleet join idc-west-1 --repo . --admin-kubeconfig ~/.kube/idc-west-1-admin --kubeconfig-dir /etc/gitfleet/members",
    "gitfleet join aws-use2 --repo . --admin-kubeconfig admin.yaml --context aws-use2 --kubeconfig-dir members --label env=prod --patch",
  ],
  import: [
    "gitfleet import checkout --repo . --namespace shop --kubeconfig ~/.kube/members",
    "gitfleet import checkout --repo . -n shop -l app=checkout --cluster test-1,staging-1 --patch > import.patch",
  ],
  backup: ["gitfleet backup list --cluster pc-1 --store-dir /etc/gitfleet/backup-stores/offsite"],
  "backup push": [
    "gitfleet backup push --cluster pc-1 --snapshot /backup/etcd-backup-29412345-abcde.db --pki-dir /pki --store-dir /store",
    "gitfleet backup push --cluster pc-1 --snapshot /backup/etcd-backup-29412345-abcde.db --pki-dir /pki --store-dir /store --keep 28",
  ],
  "backup prune": [
    "gitfleet backup prune --dir /backup --keep 28 --taken etcd-backup-29412345-abcde.db",
    "gitfleet backup prune --dir /backup --keep 28 --taken etcd-backup-29412345-abcde.db --hold etcd-backup-29400000-fghij.db",
  ],
  "backup pull": [
    "gitfleet backup pull --cluster pc-1 --store-dir offsite --identity ~/.config/age/fleet-backups.txt --into pc-1-restore",
    "gitfleet backup pull --cluster pc-1 --store-dir offsite --identity keys.txt --into old --key hosted/pc-1/20261206T060000Z-etcd-backup-29412345-abcde.tar.age",
  ],
  "move-host": [
    "gitfleet move-host --from meta-1 --to meta-2",
    "gitfleet move-host --from meta-1 --to meta-2 --repo fleet --patch > move.patch",
  ],
  "backup list": ["gitfleet backup list --cluster pc-1 --store-dir offsite -o json"],
  migrate: ["gitfleet migrate status --repo ."],
  "migrate status": ["gitfleet migrate status --repo . shop", "gitfleet migrate status --repo . -o yaml"],
  simulate: ["gitfleet simulate --from-repo example-repo --kubeconfig-out /tmp/fleet.kubeconfig"],
  status: ["gitfleet status --repo .", "gitfleet status --repo . --below v1.34.2 -o json"],
  demo: ["gitfleet demo"],
  codeowners: [
    "gitfleet codeowners . --output .github/CODEOWNERS",
    "gitfleet codeowners . --check .github/CODEOWNERS",
  ],
  completion: [
    "source <(gitfleet completion bash)",
    "gitfleet completion fish > ~/.config/fish/completions/gitfleet.fish",
  ],
};

/** Each command's path ("migrate status") in the program's tree. */
export function commandPath(command: Command): string {
  const names: string[] = [];
  for (let at: Command | null = command; at?.parent; at = at.parent) names.unshift(at.name());
  return names.join(" ");
}

/** Adds each command's examples after its help. */
export function addHelpExamples(commands: readonly Command[]): void {
  for (const command of commands) {
    const examples = HELP_EXAMPLES[commandPath(command)];
    if (examples)
      command.addHelpText("after", `\nExamples:\n${examples.map((e) => `  $ ${e}`).join("\n")}\n`);
  }
}
