import { asList, asMap, type JsonMap } from "../apimachinery/json.js";
import { firstSight } from "../autoscale/autoscale-step.js";
import { decideReplicas, type HpaHistory } from "../autoscale/hpa-algorithm.js";
import { type PodLister, podSamples } from "../kube/pod-samples.js";
import type { FederatedHPASpec } from "../model/types.js";
import type { MemberApi } from "./member-api.js";

// The horizontal pod autoscaler controller of a simulated member: every period, each
// autoscaling/v2 HorizontalPodAutoscaler reads its target's Scale, its pods and their PodMetrics,
// decides with the Kubernetes algorithm (the same implementation gitfleet's FederatedHPA uses),
// writes the new count through the target's /scale subresource as kube-controller-manager does, and
// records currentReplicas/desiredReplicas in its status. Opt-in (WorldOptions.horizontalPodAutoscalers).

const MANAGER = { userAgent: "kube-controller-manager/v1.32.0", contentType: "application/merge-patch+json" };

export class HpaController {
  private timer: NodeJS.Timeout | undefined;
  private readonly histories = new Map<string, HpaHistory>();
  private running = false;

  constructor(
    private readonly api: MemberApi,
    private readonly periodMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  start(): void {
    const tick = () => {
      void this.syncAll().finally(() => {
        if (this.timer !== undefined) this.timer = setTimeout(tick, this.periodMs);
      });
    };
    this.timer = setTimeout(tick, this.periodMs);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** One pass over every HorizontalPodAutoscaler. */
  async syncAll(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const list = asMap(this.get("/apis/autoscaling/v2/horizontalpodautoscalers"));
      for (const hpa of asList(list.items).map((h) => asMap(h))) await this.syncOne(hpa);
    } finally {
      this.running = false;
    }
  }

  private async syncOne(hpa: JsonMap): Promise<void> {
    const metadata = asMap(hpa.metadata);
    const namespace = String(metadata.namespace);
    const spec = asMap(hpa.spec);
    const scalePath = this.scalePath(asMap(spec.scaleTargetRef), namespace);
    const scale = scalePath ? asMap(this.get(scalePath)) : undefined;
    const selector = String(asMap(scale?.status).selector ?? "");
    const current = Number(asMap(scale?.spec).replicas ?? 0);
    if (!scalePath || !selector || current === 0) return;
    const samples = await podSamples(this.lister(), namespace, parseSelector(selector));
    const uid = String(metadata.uid);
    const decision = decideReplicas(
      spec as unknown as FederatedHPASpec,
      { currentReplicas: current, samples },
      this.histories.get(uid) ?? firstSight(current, this.now()),
      this.now(),
    );
    this.histories.set(uid, decision.history);
    if (decision.desiredReplicas !== current)
      this.request("PATCH", `${scalePath}?fieldManager=kube-controller-manager`, {
        spec: { replicas: decision.desiredReplicas },
      });
    this.request(
      "PATCH",
      `/apis/autoscaling/v2/namespaces/${namespace}/horizontalpodautoscalers/${String(metadata.name)}/status`,
      { status: { currentReplicas: current, desiredReplicas: decision.desiredReplicas } },
    );
  }

  // The target's /scale path, when the member serves its kind with a scale subresource.
  private scalePath(ref: JsonMap, namespace: string): string | undefined {
    const [group, version] = String(ref.apiVersion ?? "").includes("/")
      ? String(ref.apiVersion).split("/")
      : ["", String(ref.apiVersion)];
    const resource = this.api.resources().find((r) => r.group === group && r.kind === ref.kind);
    if (!resource) return undefined;
    const prefix = group === "" ? `/api/${version}` : `/apis/${group}/${version}`;
    return `${prefix}/namespaces/${namespace}/${resource.name}/${String(ref.name)}/scale`;
  }

  // Pods and PodMetrics, listed as a client would, answered by the member's own API.
  private lister(): PodLister {
    return {
      cluster: this.api.clusterName,
      list: async (apiVersion: string, kind: string, labelSelector: string, fieldSelector?: string) => {
        const path = kind === "Pod" ? "/api/v1/pods" : `/apis/${apiVersion}/pods`;
        const query = `?labelSelector=${encodeURIComponent(labelSelector)}${fieldSelector ? `&fieldSelector=${encodeURIComponent(fieldSelector)}` : ""}`;
        return asList(asMap(this.get(`${path}${query}`)).items).map((i) => asMap(i));
      },
    };
  }

  private get(pathAndQuery: string): unknown {
    const [path = "", query = ""] = pathAndQuery.split("?");
    const response = this.api.handle({
      method: "GET",
      path,
      query: new URLSearchParams(query),
      contentType: "",
      body: undefined,
      userAgent: MANAGER.userAgent,
    });
    return response.status === 200 ? response.body : undefined;
  }

  private request(method: string, pathAndQuery: string, body: JsonMap): void {
    const [path = "", query = ""] = pathAndQuery.split("?");
    this.api.handle({ method, path, query: new URLSearchParams(query), body, ...MANAGER });
  }
}

// "app=web,tier=front" → matchLabels (the Scale's status.selector of a workload with matchLabels).
function parseSelector(selector: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const part of selector.split(",")) {
    const [key, value] = part.split("=");
    if (key && value !== undefined) labels[key] = value;
  }
  return labels;
}
