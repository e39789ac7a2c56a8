import type { FleetModel } from "./types.js";

// The CODEOWNERS file the teams give (GitHub's, GitLab's and Gitea's format): the platform team
// owns every file, then each team's paths, later lines taking precedence — so a forge's branch
// protection asks the owning team to review a change to its files. Pure.

/** CODEOWNERS text for the model's teams and fleet.yaml's platformOwners. */
export function codeowners(model: Pick<FleetModel, "teams" | "fleet">): string {
  const lines = [
    "# Written by `gitfleet codeowners` from teams/*.yaml and fleet.yaml: do not edit by hand.",
    "# The platform team owns every file no team's paths match; later lines take precedence.",
  ];
  const platform = model.fleet?.spec.platformOwners ?? [];
  if (platform.length > 0) lines.push(`* ${platform.join(" ")}`);
  for (const team of model.teams) {
    lines.push("", `# team ${team.metadata.name} (${team.origin.file})`);
    for (const path of team.spec.paths)
      lines.push(`/${path.replace(/^\/+/, "")} ${team.spec.owners.join(" ")}`);
  }
  return `${lines.join("\n")}\n`;
}
