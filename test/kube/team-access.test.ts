import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { asList, asMap } from "../../src/apimachinery/json.js";
import { MemberClient } from "../../src/kube/member-client.js";
import { ensureTeamAccess } from "../../src/kube/team-access.js";
import { loadFleet } from "../../src/load/load-fleet.js";
import { formatProblem } from "../../src/model/problem.js";
import type { FleetModel } from "../../src/model/types.js";
import { renderFleet } from "../../src/render/render-fleet.js";
import { memberClientConfig } from "../../src/sim/kubeconfig.js";
import { type MemberRequest, type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { desiredByCluster } from "../../src/sync/desired-objects.js";
import { minimalFleetWith } from "../helpers/minimal-fleet.js";

/**
 * A team's account and RBAC kept in a (simulated) member before each sync: made where the team's
 * objects are to be, in the namespaces they use, and removed from where they no longer are. (The
 * real API server's refusals under impersonation are in test/e2e/real-clusters.e2e.ts.)
 */

const TEAM = `apiVersion: gitfleet.io/v1alpha1
kind: Team
metadata:
  name: web-team
spec:
  paths: [apps/web/**]
  owners: ["@shop/web"]
  namespaces: [shop, web-*]
`;
const EXTRA = `apiVersion: v1
kind: ConfigMap
metadata:
  name: extra
  namespace: web-extra
data: {a: b}
`;

let member: SimulatedMember;
let client: MemberClient;
/** Every request the member received, in order. */
let requests: MemberRequest[] = [];
const logger = pino({ level: "silent" });
beforeEach(async () => {
  requests = [];
  member = await startMember({ name: "east", onRequest: (request) => requests.push(request) });
  client = new MemberClient("east", memberClientConfig(member), { retries: 0 });
});
afterEach(() => member.close());

function modelOf(files: Record<string, string>): FleetModel {
  const result = loadFleet(minimalFleetWith(files));
  if (!result.model) throw new Error(result.problems.map(formatProblem).join("\n"));
  return result.model;
}

async function keep(model: FleetModel): Promise<void> {
  const desired = desiredByCluster(renderFleet(model, {}).objects, model).get("east") ?? [];
  await ensureTeamAccess(client, model, desired, logger);
}

// The team's access objects in the member, as "Kind namespace/name".
async function access(): Promise<string[]> {
  const found: string[] = [];
  for (const [path, kind] of [
    ["/api/v1/serviceaccounts", "ServiceAccount"],
    ["/apis/rbac.authorization.k8s.io/v1/rolebindings", "RoleBinding"],
    ["/apis/rbac.authorization.k8s.io/v1/clusterroles", "ClusterRole"],
    ["/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", "ClusterRoleBinding"],
  ] as const) {
    const list = asMap(await client.raw("GET", `${path}?labelSelector=gitfleet.io%2Fteam`));
    for (const item of asList(list.items)) {
      const metadata = asMap(asMap(item).metadata);
      found.push(`${kind} ${String(metadata.namespace ?? "-")}/${String(metadata.name)}`);
    }
  }
  return found.sort();
}

describe("a team's access in a member", () => {
  it("is made in the namespaces the team's objects use, and follows them as they change", async () => {
    await keep(modelOf({ "teams/web-team.yaml": TEAM, "apps/web/extra.yaml": EXTRA }));
    expect(await access()).toEqual([
      "ClusterRole -/gitfleet-team-web-team",
      "RoleBinding shop/gitfleet-team-web-team",
      "RoleBinding web-extra/gitfleet-team-web-team",
      "ServiceAccount gitfleet-system/gitfleet-team-web-team",
    ]);
    // The namespace the rendered tree holds no Namespace for was made bare, as the sync makes it.
    expect(
      asMap(asMap(await client.raw("GET", "/api/v1/namespaces/web-extra")).metadata).annotations,
    ).toEqual({
      "gitfleet.io/implicit-namespace": "true",
    });

    // The team no longer uses web-extra: its binding there goes, the rest stays.
    await keep(modelOf({ "teams/web-team.yaml": TEAM }));
    expect(await access()).toEqual([
      "ClusterRole -/gitfleet-team-web-team",
      "RoleBinding shop/gitfleet-team-web-team",
      "ServiceAccount gitfleet-system/gitfleet-team-web-team",
    ]);
  });

  it("is removed where the team has nothing left, and never touches RBAC gitfleet did not make for a team", async () => {
    await keep(modelOf({ "teams/web-team.yaml": TEAM }));
    await client.raw("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "ops-reader", labels: { "gitfleet.io/team": "ops" } },
      rules: [],
    });
    // The team's files moved to another path: its objects are the platform's now.
    await keep(
      modelOf({
        "teams/web-team.yaml": TEAM.replace("paths: [apps/web/**]", "paths: [apps/other/**]"),
      }),
    );
    expect(await access()).toEqual(["ClusterRole -/ops-reader"]);
  });

  it("goes with the fleet's last Team, and is not looked for again once gone", async () => {
    await keep(modelOf({ "teams/web-team.yaml": TEAM, "apps/web/extra.yaml": EXTRA }));
    expect((await access()).length).toBe(4);
    await keep(modelOf({ "apps/web/extra.yaml": EXTRA }));
    expect(await access()).toEqual([]);
    // Without teams and with nothing left, a sync asks one list of ServiceAccounts and nothing more.
    const before = requests.length;
    await keep(modelOf({ "apps/web/extra.yaml": EXTRA }));
    const asked = requests.slice(before).map((r) => `${r.method} ${r.path}`);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatch(/^GET \/api\/v1\/serviceaccounts\?/);
  });
});
