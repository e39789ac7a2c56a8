import { asList, asMap, type Json, type JsonMap } from "../../apimachinery/json.js";
import {
  AGE,
  CONTAINERS,
  column,
  created,
  IMAGES,
  int,
  NAME,
  nameOf,
  type Printer,
  SELECTOR,
  template,
} from "./columns.js";
import { ageOf } from "./human-duration.js";
import { podCells, podConditions } from "./pod-row.js";
import { formatLabelSelector, formatLabels } from "./selector-text.js";

/** kube-apiserver's printers for workloads: pods, their controllers, jobs and autoscalers. */
export const WORKLOAD_PRINTERS: readonly (readonly [string, Printer])[] = [
  [
    "/Pod",
    {
      columns: [
        NAME,
        column("Ready", "string", "The aggregate readiness state of this pod for accepting traffic."),
        column("Status", "string", "The aggregate status of the containers in this pod."),
        column(
          "Restarts",
          "string",
          "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
        ),
        AGE,
        column("IP", "string", "The IP address allocated to the pod.", 1),
        column("Node", "string", "The node the pod is scheduled onto.", 1),
        column("Nominated Node", "string", "The node the scheduler nominated for the pod.", 1),
        column("Readiness Gates", "string", "The pod's readiness gates that are met.", 1),
      ],
      cells: podCells,
      conditions: podConditions,
    },
  ],
  [
    "apps/Deployment",
    {
      columns: [
        NAME,
        column("Ready", "string", "Number of the pod with ready state"),
        column(
          "Up-to-date",
          "string",
          "Total number of non-terminated pods targeted by this deployment that have the desired template spec.",
        ),
        column(
          "Available",
          "string",
          "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.",
        ),
        AGE,
        CONTAINERS,
        IMAGES,
        SELECTOR,
      ],
      cells: (o, now) => {
        const spec = asMap(o.spec);
        const status = asMap(o.status);
        return [
          nameOf(o),
          `${int(status.readyReplicas)}/${int(spec.replicas)}`,
          int(status.updatedReplicas),
          int(status.availableReplicas),
          ageOf(created(o), now),
          ...template(spec),
          formatLabelSelector(spec.selector),
        ];
      },
    },
  ],
  [
    "apps/ReplicaSet",
    {
      columns: [
        NAME,
        column("Desired", "integer", "Replicas is the number of desired replicas."),
        column("Current", "integer", "Replicas is the most recently observed number of replicas."),
        column("Ready", "integer", "The number of ready replicas for this replica set."),
        AGE,
        CONTAINERS,
        IMAGES,
        SELECTOR,
      ],
      cells: (o, now) => {
        const spec = asMap(o.spec);
        const status = asMap(o.status);
        return [
          nameOf(o),
          int(spec.replicas),
          int(status.replicas),
          int(status.readyReplicas),
          ageOf(created(o), now),
          ...template(spec),
          formatLabelSelector(spec.selector),
        ];
      },
    },
  ],
  [
    "apps/StatefulSet",
    {
      columns: [
        NAME,
        column("Ready", "string", "Number of the pod with ready state"),
        AGE,
        CONTAINERS,
        IMAGES,
      ],
      cells: (o, now) => {
        const spec = asMap(o.spec);
        return [
          nameOf(o),
          `${int(asMap(o.status).readyReplicas)}/${int(spec.replicas)}`,
          ageOf(created(o), now),
          ...template(spec),
        ];
      },
    },
  ],
  [
    "apps/DaemonSet",
    {
      columns: [
        NAME,
        column("Desired", "integer", "The total number of nodes that should be running the daemon pod."),
        column("Current", "integer", "The number of nodes that are running at least 1 daemon pod."),
        column("Ready", "integer", "The number of nodes running the daemon pod with a Ready condition."),
        column("Up-to-date", "integer", "The total number of nodes running updated daemon pods."),
        column("Available", "integer", "The number of nodes running the daemon pod that are available."),
        column("Node Selector", "string", "The node selector of the pods."),
        AGE,
        CONTAINERS,
        IMAGES,
        SELECTOR,
      ],
      cells: (o, now) => {
        const spec = asMap(o.spec);
        const s = asMap(o.status);
        const podSpec = asMap(asMap(spec.template).spec);
        return [
          nameOf(o),
          int(s.desiredNumberScheduled),
          int(s.currentNumberScheduled),
          int(s.numberReady),
          int(s.updatedNumberScheduled),
          int(s.numberAvailable),
          formatLabels(podSpec.nodeSelector),
          ageOf(created(o), now),
          ...template(spec),
          formatLabelSelector(spec.selector),
        ];
      },
    },
  ],
  [
    "apps/ControllerRevision",
    {
      columns: [
        NAME,
        column("Controller", "string", "Controller of the object."),
        column("Revision", "string", "Revision indicates the revision of the state represented by Data."),
        AGE,
      ],
      cells: (o, now) => {
        const owner = asList(asMap(o.metadata).ownerReferences)
          .map(asMap)
          .find((r) => r.controller === true);
        const group = String(owner?.apiVersion ?? "")
          .split("/")
          .slice(0, -1)
          .join("/");
        const controller = owner
          ? `${String(owner.kind).toLowerCase()}${group ? `.${group}` : ""}/${String(owner.name)}`
          : "<none>";
        return [nameOf(o), controller, int(o.revision), ageOf(created(o), now)];
      },
    },
  ],
  [
    "batch/Job",
    {
      columns: [
        NAME,
        column("Status", "string", "Status of the job."),
        column("Completions", "string", "The number of pods which reached phase Succeeded."),
        column("Duration", "string", "Time required to complete the job."),
        AGE,
        CONTAINERS,
        IMAGES,
        SELECTOR,
      ],
      cells: (o, now) => {
        const spec = asMap(o.spec);
        return [
          nameOf(o),
          jobStatus(o),
          jobCompletions(o),
          jobDuration(o, now),
          ageOf(created(o), now),
          ...template(spec),
          formatLabelSelector(spec.selector),
        ];
      },
    },
  ],
  [
    "batch/CronJob",
    {
      columns: [
        NAME,
        column("Schedule", "string", "The schedule in Cron format."),
        column("Timezone", "string", "The time zone name for the given schedule."),
        column("Suspend", "boolean", "Whether later executions are suspended."),
        column("Active", "integer", "A list of pointers to currently running jobs."),
        column(
          "Last Schedule",
          "string",
          "Information when was the last time the job was successfully scheduled.",
        ),
        AGE,
        CONTAINERS,
        IMAGES,
        SELECTOR,
      ],
      cells: (o, now) => {
        const spec = asMap(o.spec);
        const status = asMap(o.status);
        const job = asMap(asMap(spec.jobTemplate).spec);
        const suspend = spec.suspend === undefined ? "<unset>" : String(spec.suspend === true);
        const last = status.lastScheduleTime ? ageOf(status.lastScheduleTime, now) : "<none>";
        return [
          nameOf(o),
          String(spec.schedule ?? ""),
          String(spec.timeZone ?? "<none>"),
          suspend,
          asList(status.active).length,
          last,
          ageOf(created(o), now),
          ...template(job),
          formatLabelSelector(job.selector),
        ];
      },
    },
  ],
  [
    "autoscaling/HorizontalPodAutoscaler",
    {
      columns: [
        NAME,
        column("Reference", "string", "The target of the autoscaler."),
        column("Targets", "string", "The metrics the autoscaler acts on, current/target."),
        column("MinPods", "string", "The lower limit of replicas."),
        column("MaxPods", "string", "The upper limit of replicas."),
        column("Replicas", "string", "Current number of replicas."),
        AGE,
      ],
      cells: hpaCells,
    },
  ],
];

function jobStatus(o: JsonMap): string {
  const has = (type: string) =>
    asList(asMap(o.status).conditions).some((c) => asMap(c).type === type && asMap(c).status === "True");
  if (has("Complete")) return "Complete";
  if (has("Failed")) return "Failed";
  if (asMap(o.metadata).deletionTimestamp) return "Terminating";
  if (has("Suspended")) return "Suspended";
  if (has("FailureTarget")) return "FailureTarget";
  if (has("SuccessCriteriaMet")) return "SuccessCriteriaMet";
  return "Running";
}

function jobCompletions(o: JsonMap): string {
  const spec = asMap(o.spec);
  const succeeded = int(asMap(o.status).succeeded);
  if (typeof spec.completions === "number") return `${succeeded}/${spec.completions}`;
  const parallelism = int(spec.parallelism);
  return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
}

function jobDuration(o: JsonMap, now: Date): string {
  const { startTime, completionTime } = asMap(o.status);
  if (typeof startTime !== "string") return "";
  if (typeof completionTime !== "string") return ageOf(startTime, now);
  return ageOf(startTime, new Date(Date.parse(completionTime)));
}

function hpaCells(o: JsonMap, now: Date): Json[] {
  const spec = asMap(o.spec);
  const target = asMap(spec.scaleTargetRef);
  const metrics = asList(spec.metrics).map(asMap);
  const statuses = asList(asMap(o.status).currentMetrics).map(asMap);
  const shown = metrics.slice(0, 2).map((metric, i) => metricText(metric, statuses[i]));
  const targets =
    metrics.length === 0
      ? "<none>"
      : `${shown.join(", ")}${metrics.length > 2 ? ` + ${metrics.length - 2} more...` : ""}`;
  const min = typeof spec.minReplicas === "number" ? String(spec.minReplicas) : "<unset>";
  return [
    nameOf(o),
    `${String(target.kind ?? "")}/${String(target.name ?? "")}`,
    targets,
    min,
    int(spec.maxReplicas),
    int(asMap(o.status).currentReplicas),
    ageOf(created(o), now),
  ];
}

// One metric as "cpu: 40%/80%", "1k/2k (avg)" or "<unknown>/500m".
function metricText(metric: JsonMap, status: JsonMap | undefined): string {
  const type = String(metric.type ?? "");
  const key = type.charAt(0).toLowerCase() + type.slice(1);
  const source = asMap(metric[key]);
  const current = asMap(asMap(status?.[key]).current);
  const goal = asMap(source.target);
  if (type === "Resource" || type === "ContainerResource")
    return `${String(source.name ?? "")}: ${resourceMetricText(current, goal)}`;
  if (type === "Pods")
    return `${String(current.averageValue ?? "<unknown>")}/${String(goal.averageValue ?? "")}`;
  if (type !== "Object" && type !== "External") return "<unknown type>";
  if (goal.averageValue !== undefined)
    return `${String(current.averageValue ?? "<unknown>")}/${String(goal.averageValue)} (avg)`;
  return `${String(current.value ?? "<unknown>")}/${String(goal.value ?? "")}`;
}

// A resource metric: an average value, or a utilization ("40%/80%", "<unknown>/<auto>").
function resourceMetricText(current: JsonMap, goal: JsonMap): string {
  if (goal.averageValue !== undefined)
    return `${String(current.averageValue ?? "<unknown>")}/${String(goal.averageValue)}`;
  const now = current.averageUtilization !== undefined ? `${int(current.averageUtilization)}%` : "<unknown>";
  return `${now}/${goal.averageUtilization !== undefined ? `${int(goal.averageUtilization)}%` : "<auto>"}`;
}
