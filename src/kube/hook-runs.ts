import { asMap, type JsonMap } from "../apimachinery/json.js";
import type { HookDeletePolicy } from "../model/sync-annotations.js";
import { HOOK_RUN_ANNOTATION, type HookRecord, type HookRun, hookRunValue } from "../sync/app-pass.js";
import { hookConflict, isOwnHook } from "../sync/hook-ownership.js";
import { INVENTORY_NAMESPACE } from "../sync/inventory.js";
import { mapConcurrently } from "../util/map-concurrently.js";
import { writeSystemConfigMap } from "./inventory-store.js";
import { addressOf, MemberApiError, type MemberClient, message } from "./member-client.js";
import { writerOf } from "./team-access.js";

/**
 * Hooks in a member: what it keeps of their outcomes (a ConfigMap beside the inventory, one entry per
 * app), starting a hook for its phase and rendering (a hook gitfleet left from an earlier run is
 * deleted first; anything else with its identity is a conflict), and deleting hooks as their delete
 * policies say once their outcome is kept.
 */
export const HOOK_RECORDS_CONFIGMAP = "gitfleet-hooks";

const address = {
  apiVersion: "v1",
  kind: "ConfigMap",
  namespace: INVENTORY_NAMESPACE,
  name: HOOK_RECORDS_CONFIGMAP,
};

/** The member's hook records by app, and their data as text (to skip writes that change nothing). */
export async function readHookRecords(
  client: MemberClient,
): Promise<{ records: Map<string, HookRecord>; text: string | undefined }> {
  const configMap = await client.get(address);
  if (!configMap) return { records: new Map(), text: undefined };
  const data = asMap(configMap.data);
  const records = new Map<string, HookRecord>();
  for (const [app, value] of Object.entries(data)) {
    const record = typeof value === "string" && value.length <= 1_000_000 ? parseRecord(value) : undefined;
    if (record) records.set(app, record);
  }
  return { records, text: JSON.stringify(data) };
}

// A record as the member holds it: anything that is not one is dropped (its hooks run again).
function parseRecord(text: string): HookRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const record = asMap(value);
  const { revision, commit, failed } = record;
  if (
    typeof revision !== "string" ||
    revision.length > 128 ||
    typeof commit !== "string" ||
    commit.length > 64
  )
    return undefined;
  const outcomes: Record<string, "Succeeded" | "Failed"> = {};
  for (const [key, outcome] of Object.entries(asMap(record.outcomes)).slice(0, 1000))
    if (key.length <= 1000 && (outcome === "Succeeded" || outcome === "Failed")) outcomes[key] = outcome;
  const messages: Record<string, string> = {};
  for (const [key, text] of Object.entries(asMap(record.messages)).slice(0, 1000))
    if (key in outcomes && typeof text === "string") messages[key] = text.slice(0, 2000);
  return {
    revision,
    commit,
    outcomes,
    ...(Object.keys(messages).length > 0 ? { messages } : {}),
    ...(typeof failed === "string" ? { failed: failed.slice(0, 4000) } : {}),
  };
}

/** Writes the records when they changed; returns the data written. */
export async function writeHookRecords(
  client: MemberClient,
  records: ReadonlyMap<string, HookRecord>,
  previous: string | undefined,
): Promise<string | undefined> {
  const data = Object.fromEntries(
    [...records].sort(([a], [b]) => (a < b ? -1 : 1)).map(([app, r]) => [app, JSON.stringify(r)]),
  );
  const text = JSON.stringify(data);
  if (text === previous || (previous === undefined && records.size === 0)) return previous;
  await writeSystemConfigMap(client, HOOK_RECORDS_CONFIGMAP, data, previous === undefined);
  return text;
}

/**
 * Starts hooks: each one's object made afresh for its phase and rendering. A hook replaces only an
 * object that is gitfleet's hook of the same app (hook-ownership.ts); any other object with its
 * identity is a conflict, reported and left alone, and the hook is created (never applied over an
 * object that appeared meanwhile). Returns, per hook, why it could not be started.
 */
export async function startHooks(
  client: MemberClient,
  runs: readonly HookRun[],
  revisionOf: (app: string) => string,
  live: ReadonlyMap<string, JsonMap>,
): Promise<Map<HookRun, string>> {
  const errors = new Map<HookRun, string>();
  await mapConcurrently(runs, 4, async (run) => {
    const { identity, app } = run.object;
    let replacing = false;
    try {
      const current = live.get(identity) ?? (await client.get(addressOf(run.object.object)));
      if (current && !isOwnHook(current, app)) {
        errors.set(run, hookConflict(identity, app));
        return;
      }
      replacing = current !== undefined;
      if (current) await deleteAndWait(client, current);
      const metadata = asMap(run.object.object.metadata);
      const annotations = {
        ...asMap(metadata.annotations),
        [HOOK_RUN_ANNOTATION]: hookRunValue(run.phase, revisionOf(app)),
      };
      // A team's hook is made as its team, as its other objects are applied.
      await writerOf(client, run.object).create({
        ...run.object.object,
        metadata: { ...metadata, annotations },
      });
    } catch (error) {
      const exists = error instanceof MemberApiError && error.code === 409;
      // An earlier run of its own still being deleted, or someone else's object made meanwhile.
      const why = replacing ? "its earlier run is still being deleted" : hookConflict(identity, app);
      errors.set(run, exists ? why : message(error));
    }
  });
  return errors;
}

// A hook left from an earlier run goes before the next is made (BeforeHookCreation): a Job's
// template cannot be changed in place, and the new run must not be mistaken for the old.
async function deleteAndWait(client: MemberClient, live: JsonMap): Promise<void> {
  const where = addressOf(live);
  await client.delete(where, String(asMap(live.metadata).uid ?? ""));
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && (await client.get(where))) await new Promise((r) => setTimeout(r, 100));
}

/** Deletes the hooks whose outcome a delete policy acts on (their outcome is already kept). */
export async function deleteFinishedHooks(
  client: MemberClient,
  runs: readonly HookRun[],
  revisionOf: (app: string) => string,
  live: ReadonlyMap<string, JsonMap>,
): Promise<void> {
  const finished = runs.filter((run) => {
    if (run.object.role.kind !== "hook") return false;
    const policies: readonly HookDeletePolicy[] = run.object.role.hook.deletePolicies;
    return (
      (run.outcome === "Succeeded" && policies.includes("HookSucceeded")) ||
      (run.outcome === "Failed" && policies.includes("HookFailed"))
    );
  });
  await mapConcurrently(finished, 4, async (run) => {
    const current = live.get(run.object.identity);
    const ran = asMap(asMap(current?.metadata).annotations)[HOOK_RUN_ANNOTATION];
    if (!current || ran !== hookRunValue(run.phase, revisionOf(run.object.app))) return;
    if (!isOwnHook(current, run.object.app)) return;
    await client.delete(addressOf(current), String(asMap(current.metadata).uid ?? "")).catch(() => undefined);
  });
}
