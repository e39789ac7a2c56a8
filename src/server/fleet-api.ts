import type { StatusReader } from "../git/status-reader.js";
import type { FleetView } from "../observe/fleet-view.js";
import { workloadRoom } from "../observe/workload-room.js";
import { formatPlanText } from "../plan/format-plan.js";
import type { Plan } from "../plan/plan.js";
import { planForApps } from "../plan/plan-for-apps.js";
import { type PlanOutcome, RevisionError } from "../revisions/plan-revisions.js";
import { type ApiScope, OPEN_SCOPE } from "./access-gate.js";

/** What the JSON API reads from: the status branch, and plans between two revisions. */
export interface FleetApiSources {
  readonly status: StatusReader;
  /**
   * `gitfleet plan` between two revisions of the fleet repo; "refused" for a revision the operator
   * does not allow, "busy" when the plan queue is full. `signal` aborts when the client leaves.
   */
  readonly plan: (base: string, head: string, signal: AbortSignal) => Promise<PlanAnswer>;
}

/** What asking for a plan over HTTP gives. */
export type PlanAnswer =
  | { readonly outcome: PlanOutcome }
  | { readonly busy: true }
  | { readonly cancelled: true }
  | { readonly refused: string };

/** An answer of the API: a status and a JSON body. */
export interface ApiAnswer {
  readonly status: number;
  readonly body: unknown;
}

const MAX_HISTORY = 500;
const REVISION = /^[A-Za-z0-9._/~^-]{1,200}$/;

/**
 * The read-only JSON API under /api/ (docs/observing.md, "HTTP endpoints"): the fleet overview, clusters, apps,
 * one app with its objects per cluster, migrations, the status branch's history, one commit, and the
 * plan between two revisions. Everything is read from Git, so an answer names the status commit it
 * comes from.
 */
export async function answerApi(
  sources: FleetApiSources,
  path: string,
  query: URLSearchParams,
  signal: AbortSignal = new AbortController().signal,
  scope: ApiScope = OPEN_SCOPE,
): Promise<ApiAnswer> {
  const route = path.replace(/^\/api\/?/, "").replace(/\/$/, "");
  let parts: string[];
  try {
    parts = route.split("/").map(decodeURIComponent);
  } catch {
    return { status: 400, body: { error: "the path is not a valid URL (a malformed % escape)" } };
  }
  const [head, name, ...rest] = parts;
  if (rest.length > 0) return notFound(path);
  const refused = refusal(scope, head, name);
  if (refused) return refused;
  switch (head) {
    case "fleet":
      return name === undefined ? ok(scoped(await sources.status.view(), scope)) : notFound(path);
    case "clusters":
      return list(sources, name, "clusters", path);
    case "apps":
      return name === undefined ? list(sources, undefined, "apps", path, scope) : app(sources, name);
    case "migrations":
      return list(sources, name, "migrations", path);
    case "history":
      return history(sources, query);
    case "commits": {
      const commit = name && /^[0-9a-f]{4,40}$/.test(name) ? await sources.status.commit(name) : undefined;
      return commit ? ok(commit) : { status: 404, body: { error: `no commit ${name ?? ""}` } };
    }
    case "plan":
      return plan(sources, query, signal, scope);
    default:
      return notFound(path);
  }
}

async function list(
  sources: FleetApiSources,
  name: string | undefined,
  key: "clusters" | "migrations" | "apps",
  path: string,
  scope: ApiScope = OPEN_SCOPE,
): Promise<ApiAnswer> {
  const view = scoped(await sources.status.view(), scope);
  const items: readonly unknown[] = view[key];
  if (name === undefined) return ok({ statusCommit: view.statusCommit ?? null, [key]: items });
  const found = items.find((item) => {
    const record = item as { name?: string; migration?: string };
    return (record.name ?? record.migration) === name;
  });
  return found ? ok(found) : notFound(path);
}

async function app(sources: FleetApiSources, name: string): Promise<ApiAnswer> {
  const view = await sources.status.view();
  const found = view.apps.find((a) => a.name === name);
  if (!found) return { status: 404, body: { error: `no app ${name} on the status branch` } };
  const objects = await sources.status.appObjects(name, Object.keys(found.clusters));
  const pools = new Map(view.clusters.map((c) => [c.name, c.capacity?.pools]));
  const workloads = await Promise.all(
    found.workloads.map(async (workload) => {
      const ref = Object.values(objects)
        .flat()
        .find((o) => `${o.kind} ${o.namespace ? `${o.namespace}/` : ""}${o.name}` === workload.resource);
      const object = ref ? await sources.status.renderedObject(ref.path) : undefined;
      const clusters = Object.keys(workload.clusters);
      const room = object ? workloadRoom(object, clusters, (c) => pools.get(c)) : {};
      return Object.keys(room).length > 0 ? { ...workload, room } : workload;
    }),
  );
  return ok({ statusCommit: view.statusCommit ?? null, ...found, workloads, objects });
}

async function history(sources: FleetApiSources, query: URLSearchParams): Promise<ApiAnswer> {
  const limit = Math.min(Number(query.get("limit") ?? 100) || 100, MAX_HISTORY);
  const before = query.get("before") ?? undefined;
  if (before !== undefined && !/^[0-9a-f]{40}$/.test(before))
    return { status: 400, body: { error: "before: a full commit id" } };
  return ok({ events: await sources.status.history(limit, before) });
}

async function plan(
  sources: FleetApiSources,
  query: URLSearchParams,
  signal: AbortSignal,
  scope: ApiScope,
): Promise<ApiAnswer> {
  const base = query.get("base");
  const head = query.get("head");
  if (
    !base ||
    !head ||
    !REVISION.test(base) ||
    !REVISION.test(head) ||
    base.startsWith("-") ||
    head.startsWith("-")
  )
    return { status: 400, body: { error: "base and head: two revisions (branch, tag or commit)" } };
  let answer: PlanAnswer;
  try {
    answer = await sources.plan(base, head, signal);
  } catch (error) {
    if (error instanceof RevisionError) return { status: 404, body: { error: error.message } };
    return { status: 500, body: { error: error instanceof Error ? error.message : "the plan failed" } };
  }
  if ("refused" in answer) return { status: 403, body: { error: answer.refused } };
  if ("busy" in answer)
    return { status: 429, body: { error: "plans are queued to their limit; try again in a moment" } };
  if ("cancelled" in answer) return { status: 499, body: { error: "the client left" } };
  const outcome = answer.outcome;
  if ("error" in outcome) return { status: 422, body: { error: outcome.error, notes: outcome.notes } };
  // A team's member sees what changes for their teams' apps; the platform team everything.
  const result: Plan = scope.admin ? outcome.plan : planForApps(outcome.plan, scope.seesApp);
  return ok({ base, head, notes: outcome.notes, plan: result, text: formatPlanText(result) });
}

// What a scope may not ask: another team's app (as if it were not there), the fleet's migrations,
// history and commits (they name every team's apps), and plans for those who own no app.
function refusal(scope: ApiScope, head: string | undefined, name: string | undefined): ApiAnswer | undefined {
  if (head === "apps" && name !== undefined && !scope.seesApp(name))
    return { status: 404, body: { error: `no app ${name} on the status branch` } };
  if (!scope.admin && (head === "migrations" || head === "history" || head === "commits"))
    return { status: 403, body: { error: `${head} are the platform team's to read` } };
  if (head === "plan" && !scope.mayPlan)
    return { status: 403, body: { error: "plans are for the platform team and the teams' members" } };
  return undefined;
}

// The fleet view with only the apps the scope sees.
function scoped(view: FleetView, scope: ApiScope): FleetView {
  return scope.admin ? view : { ...view, apps: view.apps.filter((a) => scope.seesApp(a.name)) };
}

function ok(body: unknown): ApiAnswer {
  return { status: 200, body };
}

function notFound(path: string): ApiAnswer {
  return { status: 404, body: { error: `nothing at ${path}` } };
}
