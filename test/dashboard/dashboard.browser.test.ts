import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { asList, asMap } from "../../src/apimachinery/json.js";
import { readEmittedYaml } from "../../src/render/yaml-reader.js";
import { appStatusPath } from "../../src/status/status-files.js";
import { launchBrowser } from "../helpers/browser.js";
import { gitIn } from "../helpers/git-repo.js";
import { until } from "../helpers/member.js";
import {
  appHealthy,
  exportingDashboardFleet,
  migrationFleet,
  proposeMoreWeb,
  type RunningController,
  runController,
} from "../helpers/running-controller.js";

// The dashboard in a real browser (Debian's chromium driven by playwright-core) against `gitfleet
// run` syncing simulated members: what a person sees. Screenshots go to test-artifacts/dashboard/.

const ARTIFACTS = fileURLToPath(new URL("../../test-artifacts/dashboard/", import.meta.url));

let controller: RunningController;
let browser: Browser;
let page: Page;
/** Uncaught errors in the page: none may happen. */
let pageErrors: string[] = [];

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  controller = await runController(exportingDashboardFleet(), "gitfleet-dashboard-");
  browser = await launchBrowser();
  await appHealthy(controller, "web");
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await controller?.stop();
});

afterEach(async () => {
  await page?.close();
  expect(pageErrors).toEqual([]);
  pageErrors = [];
});

async function open(hash: string, width = 1280): Promise<Page> {
  page = await browser.newPage({ viewport: { width, height: 900 } });
  page.on("pageerror", (error) => pageErrors.push(error.message));
  await page.goto(`${controller.url}/${hash}`);
  return page;
}

const badge = (cluster: string) => page.getByTestId(`cluster-state-${cluster}`);

describe("the dashboard", () => {
  it("lists every cluster with its health and capacity, grouped by region", async () => {
    await open("");
    for (const cluster of ["east", "north", "west", "lab"])
      await expect.poll(() => badge(cluster).textContent()).toBe("Healthy");
    const inGroup = (group: string) =>
      page
        .getByTestId(`group-${group}`)
        .locator("[data-cluster]")
        .evaluateAll((cards) => cards.map((c) => c.getAttribute("data-cluster")).sort());
    expect(await inGroup("us-east")).toEqual(["east", "north"]);
    expect(await inGroup("eu-west")).toEqual(["lab", "west"]);
    // Capacity as the members report it: three nodes of 4 CPUs each.
    await expect.poll(() => page.locator('[data-cluster="east"]').innerText()).toMatch(/CPU\s+[\d.]+ \/ 12/);
    expect(await page.locator('[data-cluster="east"]').innerText()).toMatch(/3\/3 nodes Ready/);
    // The apps table: web's ready/desired per cluster.
    const row = await page.locator('[data-app="web"]').innerText();
    expect(row).toMatch(/web\s+Healthy/);
    await page.screenshot({ path: `${ARTIFACTS}overview.png`, fullPage: true });
  });

  it("draws an app's replicas per cluster exactly as its status file says, and why clusters are left out", async () => {
    await open("#/apps/web");
    await page.getByTestId("chart-0").waitFor();
    const shown = await page.getByTestId("status-commit").locator("code").first().textContent();
    const file = asMap(
      readEmittedYaml(gitIn(controller.repo, "show", `${shown}:${appStatusPath("web")}`)) ?? {},
    );
    const decided = asMap(asMap(asMap(asList(file.workloads)[0]).decision).clusters);
    const observed = asMap(file.observed);
    expect(Object.keys(decided).sort()).toEqual(["east", "north", "west"]);
    const widths: Record<string, number> = {};
    for (const [cluster, desired] of Object.entries(decided)) {
      const ready = String(asMap(asMap(observed[cluster]).ready)["Deployment shop/web"]).split("/")[0];
      const bar = page.getByTestId(`bar-0-${cluster}`);
      expect(await bar.getAttribute("data-desired")).toBe(String(desired));
      expect(await bar.innerText()).toContain(`${ready} ready / ${desired} desired`);
      widths[cluster] = (await bar.locator(".bar-desired").boundingBox())?.width ?? 0;
    }
    // The bars are drawn to scale: widths in the ratio of the desired replicas.
    const [first, ...rest] = Object.entries(decided);
    const unit = (widths[first?.[0] as string] ?? 0) / Number(first?.[1]);
    for (const [cluster, desired] of rest)
      expect((widths[cluster] ?? 0) / unit).toBeCloseTo(Number(desired), 1);
    expect(await page.getByTestId("left-out-0").innerText()).toMatch(
      /lab: untolerated taint \{gpu=true:NoSchedule\}/,
    );
    for (const cluster of Object.keys(decided))
      expect(await page.getByTestId(`app-cluster-health-${cluster}`).textContent()).toBe("Healthy");
    // How many more replicas each cluster fits, counted from the nodes its status file records.
    const room = page.getByTestId("workload-room-0");
    for (const cluster of Object.keys(decided))
      expect(await room.locator(`[data-cluster="${cluster}"]`).innerText()).toMatch(
        new RegExp(`^${cluster} fits \\d+ more: (cpu|memory|pods) on \\d+ nodes?$`),
      );
    await page.screenshot({ path: `${ARTIFACTS}app-web.png`, fullPage: true });
  });

  it("shows where web is exported and imported, and where its traffic goes, as its status file says", async () => {
    await open("#/apps/web");
    const section = page.getByTestId("service-web.shop");
    // Every producing cluster's entry point is recorded after its first sync: then all get traffic.
    for (const cluster of ["east", "north", "west"])
      await expect
        .poll(() => section.getByTestId(`traffic-${cluster}`).textContent(), { timeout: 30_000 })
        .toBe("endpoints");
    const shown = await page.getByTestId("status-commit").locator("code").first().textContent();
    const file = asMap(
      readEmittedYaml(gitIn(controller.repo, "show", `${shown}:${appStatusPath("web")}`)) ?? {},
    );
    const service = asMap(asList(file.services)[0]);
    expect(service.service).toBe("web.shop");
    const rows = await section
      .locator("tbody tr")
      .evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-cluster")));
    expect(rows).toEqual(["east", "lab", "north", "west"]);
    for (const cluster of rows as string[]) {
      const exported = asList(service.exportedFrom).includes(cluster) ? "yes" : "";
      const imported = asList(service.importedIn).includes(cluster) ? "yes" : "";
      expect(await section.getByTestId(`exported-${cluster}`).textContent()).toBe(exported);
      expect(await section.getByTestId(`imported-${cluster}`).textContent()).toBe(imported);
    }
    // lab runs none of web's replicas: it imports the service and exports nothing.
    expect(await section.getByTestId("exported-lab").textContent()).toBe("");
    expect(await section.getByTestId("imported-lab").textContent()).toBe("yes");
    expect(await section.locator(".diagnosis").textContent()).toBe(
      "web.shop exported from east, north, west; imported in 4 clusters; endpoints east, north, west",
    );
    await page.screenshot({ path: `${ARTIFACTS}app-web-services.png`, fullPage: true });
  });

  it("renders gitfleet plan for two revisions", async () => {
    proposeMoreWeb(controller.repo, exportingDashboardFleet());
    await open("#/plan");
    await page.getByLabel("base").fill("main");
    await page.getByLabel("head").fill("more-web");
    await page.getByRole("button", { name: "Plan" }).click();
    const plan = page.getByTestId("plan");
    await plan.waitFor();
    const text = await plan.innerText();
    expect(text).toMatch(/Changes from main to more-web/);
    expect(text).toMatch(/Deployment shop\/web/);
    expect(await plan.getByRole("alert").count()).toBe(0);
    await page.screenshot({ path: `${ARTIFACTS}plan.png`, fullPage: true });
    // Far more than the members' nodes hold, asked again for the moved branch: the plan says how
    // many fit nowhere, first.
    proposeMoreWeb(controller.repo, exportingDashboardFleet(), 2000);
    await page.getByRole("button", { name: "Plan" }).click();
    const alert = plan.getByRole("alert");
    await alert.waitFor();
    expect(await alert.innerText()).toMatch(
      /^\d+ of 2000 replicas of Deployment shop\/web fit nowhere: the selected clusters fit \d+ \((cpu|memory|pods)(, [a-z]+)*\)$/,
    );
    await page.screenshot({ path: `${ARTIFACTS}plan-unplaced.png`, fullPage: true });
  });

  it("reads well in a narrow window", async () => {
    for (const hash of ["", "#/apps/web", "#/timeline"]) {
      await open(hash, 390);
      await page.locator("main section").first().waitFor();
      const overflow = Number(
        await page.evaluate("document.documentElement.scrollWidth - window.innerWidth"),
      );
      expect(overflow, hash || "overview").toBeLessThanOrEqual(0);
      if (hash === "") await page.screenshot({ path: `${ARTIFACTS}overview-narrow.png`, fullPage: true });
      await page.close();
    }
  });

  it("shows a stopped member NotReady without a reload, and its failover on the timeline", async () => {
    await open("");
    await expect.poll(() => badge("west").textContent()).toBe("Healthy");
    await controller.member("west").close();
    // Live: the page was not reloaded.
    await expect.poll(() => badge("west").textContent(), { timeout: 30_000 }).toBe("NotReady");
    // Its capacity is the last reading, said to be so.
    await expect
      .poll(() => page.locator('[data-cluster="west"]').first().innerText(), { timeout: 30_000 })
      .toMatch(/last reading: stopped answering \d+[smhd] ago/);
    await page.screenshot({ path: `${ARTIFACTS}overview-west-down.png`, fullPage: true });
    // Its traffic is withdrawn from web's service on the app page.
    await page.goto(`${controller.url}/#/apps/web`);
    await expect
      .poll(() => page.getByTestId("service-web.shop").getByTestId("traffic-west").textContent(), {
        timeout: 30_000,
      })
      .toMatch(/^(withdrawn|)$/);
    const failover = await until(() => {
      const subjects = gitIn(controller.repo, "log", "--format=%s", "gitfleet/status").split("\n");
      return subjects.find((s) => s.startsWith("failover:") && s.includes("west"));
    }, 30_000);
    await page.getByRole("link", { name: "Timeline" }).click();
    const event = page.locator('[data-kind="failover"]').filter({ hasText: failover });
    await event.first().waitFor({ timeout: 10_000 });
    expect(await event.first().locator(".kind").textContent()).toBe("failover");
    await page.screenshot({ path: `${ARTIFACTS}timeline-failover.png`, fullPage: true });
    // The event links to its commit: message and the files it changed.
    await event.first().locator(".event-subject").click();
    await expect.poll(() => page.locator("main").innerText()).toMatch(/files changed/);
    expect(await page.locator("main").innerText()).toContain(appStatusPath("web"));
  });
});

describe("the migration board", () => {
  let migrating: RunningController;

  beforeAll(async () => {
    migrating = await runController(migrationFleet(), "gitfleet-dashboard-migration-");
  }, 60_000);

  afterAll(async () => {
    await migrating?.stop();
  });

  it("shows each batch with its state and why, as status/migrations/ records them", async () => {
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.goto(`${migrating.url}/#/migrations`);
    const batch = (name: string) => page.locator(`[data-batch="${name}"]`);
    await expect
      .poll(() => batch("first").locator(".badge").first().textContent(), { timeout: 30_000 })
      .toBe("Succeeded");
    await expect
      .poll(() => batch("second").locator(".badge").first().textContent(), { timeout: 10_000 })
      .toBe("WaitingApproval");
    expect(await batch("second").innerText()).toMatch(/approved: true in a reviewed commit starts it/);
    expect(await batch("first").innerText()).toMatch(/legacy in east\s+Healthy/);
    // The same states as the status file the board reads.
    const file = gitIn(migrating.repo, "show", "gitfleet/status:status/migrations/legacy.yaml");
    expect(file).toMatch(/name: first\n\s+state: Succeeded/);
    expect(file).toMatch(/name: second\n\s+state: WaitingApproval/);
    await page.screenshot({ path: `${ARTIFACTS}migrations.png`, fullPage: true });
  });
});
