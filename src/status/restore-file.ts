import { isJsonMap } from "../apimachinery/json.js";
import { RESTORE_PHASES, type RestoreStatus } from "../migrate/etcd-restore.js";
import { RESTORES_DIRECTORY } from "./layout.js";
import { readStatusYaml, statusYaml } from "./status-yaml.js";

/** status/restores/<name>.yaml */
export function restoreStatusPath(name: string): string {
  return `${RESTORES_DIRECTORY}${name}.yaml`;
}

/** The status file's text: byte-stable for the same status. */
export function restoreStatusText(status: RestoreStatus): string {
  return statusYaml(status);
}

/** Reads a status file's text back; undefined when it does not read as one (the branch is untrusted). */
export function readRestoreStatus(text: string | undefined): RestoreStatus | undefined {
  const value = readStatusYaml(text);
  if (!isJsonMap(value)) return undefined;
  const phase = RESTORE_PHASES.find((p) => p === value.phase);
  const fields = ["restore", "cluster", "since", "startedIn"] as const;
  const isText = (f: string) => typeof value[f] === "string" && String(value[f]).length <= 1024;
  if (!phase || fields.some((f) => !isText(f) || String(value[f]).length > 256)) return undefined;
  // From the backup volume or from an off-host backup: exactly one.
  if (isText("snapshot") === isText("backup")) return undefined;
  const field = (key: string) => String(value[key]);
  const optional = (key: "snapshot" | "backup" | "fetched") => (isText(key) ? { [key]: field(key) } : {});
  return {
    restore: field("restore"),
    cluster: field("cluster"),
    ...optional("snapshot"),
    ...optional("backup"),
    ...optional("fetched"),
    phase,
    since: field("since"),
    startedIn: field("startedIn"),
    ...(typeof value.reason === "string" ? { reason: value.reason.slice(0, 1000) } : {}),
  };
}

/** Every restore status the branch's files hold. */
export function recordedRestores(files: ReadonlyMap<string, string>): RestoreStatus[] {
  const statuses: RestoreStatus[] = [];
  for (const [path, text] of files)
    if (path.startsWith(RESTORES_DIRECTORY)) {
      const status = readRestoreStatus(text);
      if (status) statuses.push(status);
    }
  return statuses;
}
