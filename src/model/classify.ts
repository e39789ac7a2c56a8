import type { GitfleetKind } from "./types.js";

/** What a file in the fleet repo holds, decided by its path alone (DESIGN.md §1). */
export type FileRole =
  | { readonly role: "gitfleet"; readonly kinds: readonly GitfleetKind[]; readonly directory: string }
  | { readonly role: "app-definition"; readonly app: string }
  | { readonly role: "manifest"; readonly app: string }
  | { readonly role: "stray"; readonly reason: string }
  | { readonly role: "ignored" };

const KIND_DIRECTORIES: Readonly<Record<string, readonly GitfleetKind[]>> = {
  clusters: ["Cluster"],
  placements: ["Placement"],
  overrides: ["Override"],
  interpreters: ["ResourceInterpreter"],
  autoscaling: ["FederatedHPA", "CronScale", "ScaleDownRequest"],
  migrations: ["Migration"],
  quotas: ["FederatedResourceQuota"],
  teams: ["Team"],
  controlplanes: ["ControlPlaneClass", "ControlPlaneUpgrade", "EtcdRestore", "EtcdMemberReplacement"],
};

const YAML_FILE = /\.(ya?ml)$/;
const MANIFEST_FILE = /\.(ya?ml|json)$/;

/** The directory each gitfleet kind lives in. */
export const KIND_DIRECTORY: Readonly<Partial<Record<GitfleetKind, string>>> = Object.fromEntries(
  Object.entries(KIND_DIRECTORIES).flatMap(([directory, kinds]) => kinds.map((kind) => [kind, directory])),
);

/** Classifies a repo-relative path. Hidden files and files outside the known layout are ignored. */
export function classifyPath(path: string): FileRole {
  const parts = path.split("/");
  if (parts.some((part) => part.startsWith("."))) return { role: "ignored" };
  const [top = "", second, ...rest] = parts;
  if (parts.length === 1) {
    return path === "fleet.yaml" || path === "fleet.yml"
      ? { role: "gitfleet", kinds: ["Fleet"], directory: "" }
      : { role: "ignored" };
  }
  const kinds = Object.hasOwn(KIND_DIRECTORIES, top) ? KIND_DIRECTORIES[top] : undefined;
  if (kinds) return YAML_FILE.test(path) ? { role: "gitfleet", kinds, directory: top } : { role: "ignored" };
  if (top !== "apps" || second === undefined || !MANIFEST_FILE.test(path)) return { role: "ignored" };
  if (rest.length === 0) {
    return { role: "stray", reason: "files directly under apps/ belong to no app; move it into apps/<app>/" };
  }
  if (rest.length === 1 && (rest[0] === "app.yaml" || rest[0] === "app.yml"))
    return { role: "app-definition", app: second };
  return { role: "manifest", app: second };
}
