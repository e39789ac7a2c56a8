import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadFleetWithBuilds } from "../../src/builds/load-with-builds.js";
import { ChartRenderer } from "../../src/helm/chart-renderer.js";
import { helmEnvironment } from "../../src/helm/helm-environment.js";
import { DEFAULT_LOAD_POLICY } from "../../src/model/load-policy.js";
import { formatProblem } from "../../src/model/problem.js";
import { childrenBounded, MAX_CHILDREN, runProgram } from "../../src/util/run-program.js";
import { helmBinary } from "../helpers/helm.js";
import { minimalFleetWith } from "../helpers/minimal-fleet.js";
import { probedWhile, startProbedServer } from "../helpers/probed-server.js";

/**
 * N4 (security audit 2): helm ran with no memory bound. A four-line template built a string of
 * gigabytes (7.8 GB of RSS) and validated; in the shipped chart that OOM-kills the controller's pod.
 * Every child (helm, git, ssh-keygen, gpg) now runs under a memory and CPU-time bound (prlimit), at
 * most MAX_CHILDREN at once; hitting a bound is a clear error at the app's file, cached like any
 * render failure, and the controller — another process — stays up and answering.
 */

let binary: string;
let work: string;

// The audit's template: a string doubled 28 times (2 GiB), its length in a ConfigMap.
const DOUBLING = `{{- $s := "xxxxxxxx" }}{{- range until 28 }}{{- $s = printf "%s%s" $s $s }}{{- end }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: big
data:
  n: "{{ len $s }}"
`;

const fleet = (template: string) =>
  minimalFleetWith({
    "apps/shop/app.yaml":
      "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: shop\nspec:\n  namespace: shop\n  helm:\n    chart: chart\n",
    "apps/shop/chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
    "apps/shop/chart/templates/cm.yaml": template,
  });

beforeAll(() => {
  binary = helmBinary();
  work = mkdtempSync(join(tmpdir(), "gitfleet-n4-"));
}, 20 * 60_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("N4: children run bounded", () => {
  it("runs them under prlimit here (util-linux is installed)", () => {
    expect(childrenBounded()).toBe(true);
  });

  it("the audit's doubling template: a memory-bound error at the app's file, cached, the controller answering meanwhile", async () => {
    const environment = helmEnvironment({
      GITFLEET_HELM: binary,
      GITFLEET_CACHE_DIR: join(work, "cache"),
      GITFLEET_HELM_MEMORY: "256",
    });
    const charts = new ChartRenderer(environment);
    const server = await startProbedServer();
    try {
      const { result: loaded, answered } = await probedWhile(
        server,
        loadFleetWithBuilds(fleet(DOUBLING), { charts }),
      );
      const errors = loaded.problems.filter((p) => p.severity === "error").map(formatProblem);
      expect(errors).toEqual([
        expect.stringMatching(
          /^apps\/shop\/app\.yaml:\d+:\d+: error: \/spec\/helm\/chart: helm template failed for apps\/shop\/chart: helm ran out of its memory bound \(256 MiB, GITFLEET_HELM_MEMORY\) \[HELM_RENDER_FAILED\]$/,
        ),
      ]);
      expect(answered.length).toBeGreaterThan(0);
      expect(answered.every((status) => status === 200)).toBe(true);
      // The failure is a function of the inputs: the next load runs no helm.
      const runs = charts.stats.helmRuns;
      await loadFleetWithBuilds(fleet(DOUBLING), { charts });
      expect(charts.stats.helmRuns).toBe(runs);
    } finally {
      await server.close();
    }
  });

  it.each([
    [4, true],
    [3, false],
  ])(
    "a chart rendering 4 objects under a bound of %i objects per app (--max-app-objects)",
    async (max, fits) => {
      const template =
        "{{- range until 4 }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{{ . }}\n{{- end }}\n";
      const environment = helmEnvironment({
        GITFLEET_HELM: binary,
        GITFLEET_CACHE_DIR: join(work, "cache-objects"),
      });
      const loaded = await loadFleetWithBuilds(
        fleet(template),
        { charts: new ChartRenderer(environment) },
        undefined,
        { ...DEFAULT_LOAD_POLICY, maxAppObjects: max },
      );
      const errors = loaded.problems.filter((p) => p.severity === "error").map(formatProblem);
      if (fits) expect(errors).toEqual([]);
      else
        expect(errors).toEqual([
          expect.stringMatching(
            /^apps\/shop\/app\.yaml:\d+:\d+: error: \/spec\/helm\/chart: helm chart apps\/shop\/chart renders more than 3 objects \(the operator's bound, --max-app-objects\) \[TOO_MANY_OBJECTS\]$/,
          ),
        ]);
    },
  );

  it.each([
    ["well within the bound", 2 ** 20 * 96, true],
    ["past the bound", 2 ** 20 * 400, false],
  ])("a program allocating %s of 256 MiB", async (_name, bytes, fits) => {
    const result = await runProgram("python3", ["-c", `x = bytearray(${bytes}); print(len(x))`], "", {
      memoryBytes: 256 * 2 ** 20,
    });
    if (fits)
      expect({ code: result.code, out: result.stdout.trim() }).toEqual({ code: 0, out: String(bytes) });
    else expect(result.limit).toBe("memory");
  });

  it("a program past its CPU time is stopped and says which bound", async () => {
    const result = await runProgram("python3", ["-c", "while True: pass"], "", { cpuSeconds: 1 });
    expect(result.limit).toMatch(/^(cpu|killed)$/);
    expect(result.code).not.toBe(0);
  });

  it(`runs at most ${MAX_CHILDREN} children at once, the others in turn`, async () => {
    const dir = join(work, "running");
    mkdirSync(dir);
    // Each child notes how many others run as it starts, runs a while, then leaves.
    const script = `import os, sys, time
d = sys.argv[1]
open(os.path.join(d, "seen-" + str(os.getpid())), "w").write(str(len([n for n in os.listdir(d) if n.startswith("run-")])))
marker = os.path.join(d, "run-" + str(os.getpid()))
open(marker, "w").close()
time.sleep(0.3)
os.remove(marker)`;
    writeFileSync(join(work, "child.py"), script);
    await Promise.all(
      Array.from({ length: MAX_CHILDREN * 2 + 1 }, () =>
        runProgram("python3", [join(work, "child.py"), dir], ""),
      ),
    );
    const seen = readdirSync(dir)
      .filter((n) => n.startsWith("seen-"))
      .map((n) => Number(readFileSync(join(dir, n), "utf8")));
    expect(seen).toHaveLength(MAX_CHILDREN * 2 + 1);
    expect(Math.max(...seen)).toBeLessThan(MAX_CHILDREN);
  });
});
