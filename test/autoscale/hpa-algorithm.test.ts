import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  decideReplicas,
  EMPTY_HISTORY,
  type HpaHistory,
  type PodSample,
} from "../../src/autoscale/hpa-algorithm.js";
import type { FederatedHPASpec } from "../../src/model/types.js";

// The HPA controller's algorithm over pods from every cluster: ratio and tolerance, pods without
// metrics, stabilization windows, rate policies, bounds — table-driven, then properties.

const T = Date.parse("2026-11-29T12:00:00Z");
const cpu = (utilization: number, extra: Partial<FederatedHPASpec> = {}): FederatedHPASpec => ({
  scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" },
  minReplicas: 2,
  maxReplicas: 40,
  metrics: [
    {
      type: "Resource",
      resource: { name: "cpu", target: { type: "Utilization", averageUtilization: utilization } },
    },
  ],
  ...extra,
});
/** n ready pods of request 1 core, each at `percent` of it, spread over two clusters. */
const pods = (n: number, percent: number, extra: Partial<PodSample> = {}): PodSample[] =>
  Array.from({ length: n }, (_, i) => ({
    cluster: i % 2 === 0 ? "a" : "b",
    pod: `web-${i}`,
    ready: true,
    usage: percent / 100,
    request: 1,
    ...extra,
  }));
const history = (recommendations: [number, number][], events: [number, number][] = []): HpaHistory => ({
  recommendations: recommendations.map(([ago, replicas]) => ({ at: T - ago * 1000, replicas })),
  events: events.map(([ago, change]) => ({ at: T - ago * 1000, change })),
});

describe("the HPA algorithm over a federation's pods", () => {
  const cases: [string, FederatedHPASpec, number, PodSample[], HpaHistory, number, string | undefined][] = [
    ["within the 10% tolerance nothing changes", cpu(65), 10, pods(10, 70), EMPTY_HISTORY, 10, undefined],
    ["twice the target doubles the replicas", cpu(65), 4, pods(4, 130), EMPTY_HISTORY, 8, undefined],
    [
      "a scale-up is limited to max(+4 pods, +100%) per 15 s",
      cpu(100),
      10,
      pods(10, 300),
      EMPTY_HISTORY,
      20,
      "ScaleUpLimit",
    ],
    [
      "… counting what was added in the period already",
      cpu(100),
      20,
      pods(20, 300),
      history([], [[10, 10]]),
      20,
      "ScaleUpLimit",
    ],
    [
      "maxReplicas bounds the global total",
      cpu(50, { maxReplicas: 12 }),
      10,
      pods(10, 100),
      EMPTY_HISTORY,
      12,
      "TooManyReplicas",
    ],
    [
      "a scale-down waits for the 5-minute stabilization window",
      cpu(100),
      10,
      pods(10, 50),
      history([[60, 10]]),
      10,
      "ScaleDownStabilized",
    ],
    [
      "after the window the scale-down happens",
      cpu(100),
      10,
      pods(10, 50),
      history([[301, 10]]),
      5,
      undefined,
    ],
    [
      "a scale-down policy of 20% per minute limits it",
      cpu(100, {
        behavior: {
          scaleDown: {
            stabilizationWindowSeconds: 0,
            policies: [{ type: "Percent", value: 20, periodSeconds: 60 }],
          },
        },
      }),
      10,
      pods(10, 50),
      EMPTY_HISTORY,
      8,
      "ScaleDownLimit",
    ],
    [
      "minReplicas is the floor",
      cpu(100, { behavior: { scaleDown: { stabilizationWindowSeconds: 0 } } }),
      4,
      pods(4, 10),
      EMPTY_HISTORY,
      2,
      "TooFewReplicas",
    ],
    [
      "pods without metrics count as at the target when scaling down",
      cpu(50, { behavior: { scaleDown: { stabilizationWindowSeconds: 0 } } }),
      4,
      [...pods(2, 10), ...pods(2, 0, { usage: undefined })],
      EMPTY_HISTORY,
      3,
      undefined,
    ],
    [
      "not-ready pods count as idle when scaling up, which here cancels it",
      cpu(100),
      4,
      [...pods(2, 150), ...pods(2, 0, { ready: false, usage: undefined })],
      EMPTY_HISTORY,
      4,
      undefined,
    ],
    ["scaled to zero by a person: left alone", cpu(50), 0, [], EMPTY_HISTORY, 0, "ScalingDisabled"],
    ["below minReplicas: raised to it first", cpu(50), 1, pods(1, 10), EMPTY_HISTORY, 2, "TooFewReplicas"],
    [
      "an average-value target (500m per pod)",
      {
        ...cpu(50),
        metrics: [
          {
            type: "Resource",
            resource: { name: "cpu", target: { type: "AverageValue", averageValue: "500m" } },
          },
        ],
      },
      3,
      pods(3, 90),
      EMPTY_HISTORY,
      6,
      undefined,
    ],
    [
      "scale-up disabled",
      cpu(50, { behavior: { scaleUp: { selectPolicy: "Disabled" } } }),
      4,
      pods(4, 100),
      EMPTY_HISTORY,
      4,
      "ScalingDisabled",
    ],
  ];
  it.each(cases)("%s", (_name, spec, current, samples, past, expected, limitedBy) => {
    const decision = decideReplicas(spec, { currentReplicas: current, samples: { cpu: samples } }, past, T);
    expect(decision.desiredReplicas).toBe(expected);
    expect(decision.limitedBy).toBe(limitedBy);
  });

  it("says which metric decided, with its value against the target", () => {
    const decision = decideReplicas(
      cpu(70),
      { currentReplicas: 12, samples: { cpu: pods(12, 91) } },
      EMPTY_HISTORY,
      T,
    );
    expect(decision.reason).toBe("cpu 91% > 70%");
    expect(decision.desiredReplicas).toBe(16);
  });

  it("takes the largest proposal of several metrics", () => {
    const spec: FederatedHPASpec = {
      ...cpu(100),
      metrics: [
        {
          type: "Resource",
          resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 100 } },
        },
        {
          type: "Resource",
          resource: { name: "memory", target: { type: "Utilization", averageUtilization: 50 } },
        },
      ],
    };
    const decision = decideReplicas(
      spec,
      { currentReplicas: 4, samples: { cpu: pods(4, 100), memory: pods(4, 100) } },
      EMPTY_HISTORY,
      T,
    );
    expect(decision).toMatchObject({ desiredReplicas: 8, reason: "memory 100% > 50%" });
  });

  it("records the recommendation and the scale event it needs in later rounds", () => {
    const first = decideReplicas(
      cpu(100),
      { currentReplicas: 10, samples: { cpu: pods(10, 300) } },
      EMPTY_HISTORY,
      T,
    );
    expect(first.history).toEqual({
      recommendations: [{ at: T, replicas: 30 }],
      events: [{ at: T, change: 10 }],
    });
    // 5 s later the period still holds the +10: no further scale-up beyond +100% of the start.
    const second = decideReplicas(
      cpu(100),
      { currentReplicas: 20, samples: { cpu: pods(20, 300) } },
      first.history,
      T + 5_000,
    );
    expect(second.desiredReplicas).toBe(20);
    // 16 s later the period has passed.
    const third = decideReplicas(
      cpu(100),
      { currentReplicas: 20, samples: { cpu: pods(20, 300) } },
      first.history,
      T + 16_000,
    );
    expect(third.desiredReplicas).toBe(40);
  });

  it("stays within [min, max] and never steps further than the policies allow (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 0, max: 30 }),
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 1, max: 500 }),
        fc.integer({ min: 10, max: 100 }),
        (min, extra, current, percent, target) => {
          const max = min + extra;
          const spec = cpu(target, { minReplicas: min, maxReplicas: max });
          const observed = { currentReplicas: current, samples: { cpu: pods(current, percent) } };
          const d = decideReplicas(spec, observed, EMPTY_HISTORY, T).desiredReplicas;
          // With a recommendation of the current count a minute ago, the scale-down window holds.
          const held = decideReplicas(spec, observed, history([[60, current]]), T).desiredReplicas;
          if (current >= min && current <= max) {
            expect(d).toBeGreaterThanOrEqual(min);
            expect(d).toBeLessThanOrEqual(max);
            // Default scale-up: at most max(+4, double) in one step.
            expect(d).toBeLessThanOrEqual(Math.max(current + 4, current * 2));
            expect(held).toBeGreaterThanOrEqual(current);
          } else expect(d).toBe(current > max ? max : min);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("custom and external metrics", () => {
  const spec = (metric: NonNullable<FederatedHPASpec["metrics"]>[number]): FederatedHPASpec => ({
    scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" },
    minReplicas: 1,
    maxReplicas: 100,
    metrics: [metric],
    // No rate limit: the metric's own proposal shows.
    behavior: { scaleUp: { policies: [{ type: "Percent", value: 1000, periodSeconds: 15 }] } },
  });
  const external = (target: { type: "Value" | "AverageValue"; value?: string; averageValue?: string }) =>
    spec({ type: "External", external: { metric: { name: "queue_messages_ready" }, target } });
  const object = (target: { type: "Value" | "AverageValue"; value?: string; averageValue?: string }) =>
    spec({
      type: "Object",
      object: {
        describedObject: { apiVersion: "networking.k8s.io/v1", kind: "Ingress", name: "main-route" },
        metric: { name: "requests_per_second" },
        target,
      },
    });
  const rps = (n: number, value: number, ready = true): PodSample[] =>
    Array.from({ length: n }, (_, i) => ({ cluster: "a", pod: `web-${i}`, ready, usage: value, request: 0 }));
  const EXTERNAL = "external/queue_messages_ready";
  const OBJECT = "object/Ingress/main-route/requests_per_second";

  it.each([
    // [what, spec, current, values, readyPods, expected]
    [
      "External Value: ready pods × value/target",
      external({ type: "Value", value: "30" }),
      4,
      { [EXTERNAL]: 120 },
      4,
      16,
    ],
    [
      "External Value: the ratio times the ready pods, not all",
      external({ type: "Value", value: "30" }),
      4,
      { [EXTERNAL]: 120 },
      3,
      12,
    ],
    [
      "External Value within 10%: kept",
      external({ type: "Value", value: "100" }),
      4,
      { [EXTERNAL]: 109 },
      4,
      4,
    ],
    [
      "External Value just past 10%: scales",
      external({ type: "Value", value: "100" }),
      4,
      { [EXTERNAL]: 111 },
      4,
      5,
    ],
    [
      "External AverageValue: value / per-pod target",
      external({ type: "AverageValue", averageValue: "30" }),
      4,
      { [EXTERNAL]: 200 },
      4,
      7,
    ],
    [
      "External AverageValue within 10% of current × target: kept",
      external({ type: "AverageValue", averageValue: "25" }),
      4,
      { [EXTERNAL]: 105 },
      4,
      4,
    ],
    ["Object Value: scales down too", object({ type: "Value", value: "100" }), 10, { [OBJECT]: 50 }, 10, 5],
    ["Object AverageValue", object({ type: "AverageValue", averageValue: "10" }), 2, { [OBJECT]: 55 }, 2, 6],
    ["no value this round: the metric does not vote", external({ type: "Value", value: "30" }), 4, {}, 4, 4],
  ] as const)("%s", (_what, hpa, current, values, readyPods, expected) => {
    const decided = decideReplicas(
      hpa,
      { currentReplicas: current, samples: {}, values, readyPods },
      EMPTY_HISTORY,
      T,
    );
    expect(decided.metricReplicas).toBe(expected);
  });

  it("a Pods metric averages every pod's value against the per-pod target, unready pods included", () => {
    const hpa = spec({
      type: "Pods",
      pods: { metric: { name: "http_requests" }, target: { type: "AverageValue", averageValue: "10" } },
    });
    const samples = {
      "pods/http_requests": [...rps(2, 30), ...rps(2, 10, false).map((s, i) => ({ ...s, pod: `x-${i}` }))],
    };
    // Average 20 per pod over 4 pods against 10: 8 (readiness does not matter for a Pods metric).
    expect(decideReplicas(hpa, { currentReplicas: 4, samples }, EMPTY_HISTORY, T)).toMatchObject({
      metricReplicas: 8,
      reason: "http_requests 20 > 10",
    });
  });

  it("the largest proposal over Resource and External metrics wins", () => {
    const hpa: FederatedHPASpec = {
      ...cpu(50),
      metrics: [
        ...(cpu(50).metrics ?? []),
        {
          type: "External",
          external: {
            metric: { name: "queue_messages_ready" },
            target: { type: "AverageValue", averageValue: "5" },
          },
        },
      ],
    };
    const decided = decideReplicas(
      hpa,
      { currentReplicas: 4, samples: { cpu: pods(4, 50) }, values: { [EXTERNAL]: 60 } },
      EMPTY_HISTORY,
      T,
    );
    expect(decided.metricReplicas).toBe(12);
    expect(decided.reason).toBe("queue_messages_ready 15/pod > 5/pod");
  });
});
