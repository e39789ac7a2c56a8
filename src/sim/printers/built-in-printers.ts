import { asList, asMap, type Json, type JsonMap } from "../../model/json.js";
import { ageOf } from "./human-duration.js";
import { podCells, podConditions } from "./pod-row.js";
import { formatLabelSelector, formatLabels } from "./selector-text.js";

/** One column of a Table, as metav1.TableColumnDefinition; priority 1 columns are kubectl's `-o wide`. */
export interface Column {
  readonly name: string;
  readonly type: "string" | "integer" | "number" | "boolean" | "date";
  readonly format?: string;
  readonly priority?: number;
  readonly description: string;
}

/** How one kind prints: its columns and each object's cells (all of them: the server always prints wide). */
export interface Printer {
  readonly columns: readonly Column[];
  cells(object: JsonMap, now: Date): Json[];
  conditions?(object: JsonMap): Json[] | undefined;
}

const NAME: Column = {
  name: "Name",
  type: "string",
  format: "name",
  description: "Name must be unique within a namespace.",
};
const AGE: Column = {
  name: "Age",
  type: "string",
  description: "CreationTimestamp is when this object was created.",
};
const CONTAINERS: Column = {
  name: "Containers",
  type: "string",
  priority: 1,
  description: "Names of each container in the template.",
};
const IMAGES: Column = {
  name: "Images",
  type: "string",
  priority: 1,
  description: "Images referenced by each container in the template.",
};
const SELECTOR: Column = {
  name: "Selector",
  type: "string",
  priority: 1,
  description: "The label selector of the pods.",
};

const column = (name: string, type: Column["type"], description: string, priority?: number): Column =>
  priority ? { name, type, priority, description } : { name, type, description };

// The kinds kube-apiserver prints without a printer of their own: NAME and CREATED AT.
export const DEFAULT_PRINTER: Printer = {
  columns: [
    NAME,
    { name: "Created At", type: "date", description: "CreationTimestamp is when this object was created." },
  ],
  cells: (o) => [nameOf(o), asMap(o.metadata).creationTimestamp ?? null],
};

/**
 * The printers of kube-apiserver for the built-in kinds a simulated member serves, by "group/Kind"
 * (core kinds as "/Kind"): the columns `kubectl get` shows, in order, with the same names, and cells
 * computed as the API server computes them.
 */
export const BUILT_IN_PRINTERS: ReadonlyMap<string, Printer> = new Map<string, Printer>([
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
    "/Service",
    {
      columns: [
        NAME,
        column("Type", "string", "The type of the service."),
        column("Cluster-IP", "string", "The IP address of the service."),
        column("External-IP", "string", "The external addresses of the service."),
        column("Port(s)", "string", "The ports the service exposes."),
        AGE,
        column("Selector", "string", "The pods the service sends traffic to.", 1),
      ],
      cells: (o, now) => {
        const spec = asMap(o.spec);
        const ports = asList(spec.ports)
          .map(asMap)
          .map((p) =>
            Number(p.nodePort ?? 0) > 0
              ? `${int(p.port)}:${int(p.nodePort)}/${String(p.protocol ?? "TCP")}`
              : `${int(p.port)}/${String(p.protocol ?? "TCP")}`,
          );
        return [
          nameOf(o),
          String(spec.type ?? ""),
          String(asList(spec.clusterIPs)[0] ?? "<none>"),
          externalIp(o),
          ports.join(",") || "<none>",
          ageOf(created(o), now),
          formatLabels(spec.selector),
        ];
      },
    },
  ],
  [
    "/Endpoints",
    {
      columns: [NAME, column("Endpoints", "string", "The endpoints of the service."), AGE],
      cells: (o, now) => [nameOf(o), endpointsText(o), ageOf(created(o), now)],
    },
  ],
  [
    "/Node",
    {
      columns: [
        NAME,
        column("Status", "string", "The status of the node"),
        column("Roles", "string", "The roles of the node"),
        AGE,
        column("Version", "string", "Kubelet Version reported by the node."),
        column("Internal-IP", "string", "List of addresses reachable to the node.", 1),
        column("External-IP", "string", "List of addresses reachable to the node.", 1),
        column("OS-Image", "string", "OS Image reported by the node from /etc/os-release.", 1),
        column("Kernel-Version", "string", "Kernel Version reported by the node.", 1),
        column("Container-Runtime", "string", "Container Runtime Version reported by the node.", 1),
      ],
      cells: nodeCells,
    },
  ],
  [
    "/Event",
    {
      columns: [
        column("Last Seen", "string", "The last time this event was seen."),
        column("Type", "string", "Type of this event (Normal, Warning)."),
        column(
          "Reason",
          "string",
          "Short, machine understandable string that gives the reason for the event.",
        ),
        column("Object", "string", "The object this Event is about."),
        column("Subobject", "string", "The subobject (fieldPath) the event is about.", 1),
        column("Source", "string", "The component reporting this event.", 1),
        column("Message", "string", "A human-readable description of the status of this operation."),
        column("First Seen", "string", "The first time this event was seen.", 1),
        column("Count", "string", "The number of times this event has occurred.", 1),
        { ...NAME, priority: 1 },
      ],
      cells: eventCells,
    },
  ],
  [
    "/Namespace",
    {
      columns: [NAME, column("Status", "string", "The status of the namespace"), AGE],
      cells: (o, now) => [nameOf(o), String(asMap(o.status).phase ?? ""), ageOf(created(o), now)],
    },
  ],
  [
    "/Secret",
    {
      columns: [
        NAME,
        column("Type", "string", "The type of the secret"),
        column("Data", "string", "The number of items in the secret"),
        AGE,
      ],
      cells: (o, now) => [
        nameOf(o),
        String(o.type ?? ""),
        Object.keys(asMap(o.data)).length,
        ageOf(created(o), now),
      ],
    },
  ],
  [
    "/ConfigMap",
    {
      columns: [NAME, column("Data", "string", "The number of items in the configmap."), AGE],
      cells: (o, now) => [
        nameOf(o),
        Object.keys(asMap(o.data)).length + Object.keys(asMap(o.binaryData)).length,
        ageOf(created(o), now),
      ],
    },
  ],
  ["/ServiceAccount", { columns: [NAME, AGE], cells: (o, now) => [nameOf(o), ageOf(created(o), now)] }],
  [
    "/PersistentVolumeClaim",
    {
      columns: [
        NAME,
        column("Status", "string", "The phase of the claim."),
        column("Volume", "string", "The volume bound to the claim."),
        column("Capacity", "string", "The capacity of the bound volume."),
        column("Access Modes", "string", "The access modes of the bound volume."),
        column("StorageClass", "string", "The storage class of the claim."),
        column("VolumeAttributesClass", "string", "The volume attributes class of the claim."),
        AGE,
        column("VolumeMode", "string", "The volume mode of the claim.", 1),
      ],
      cells: pvcCells,
    },
  ],
  [
    "/PersistentVolume",
    {
      columns: [
        NAME,
        column("Capacity", "string", "The capacity of the volume."),
        column("Access Modes", "string", "The access modes of the volume."),
        column("Reclaim Policy", "string", "What happens to the volume when released."),
        column("Status", "string", "The phase of the volume."),
        column("Claim", "string", "The claim bound to the volume."),
        column("StorageClass", "string", "The storage class of the volume."),
        column("VolumeAttributesClass", "string", "The volume attributes class of the volume."),
        column("Reason", "string", "Why the volume is in its phase."),
        AGE,
        column("VolumeMode", "string", "The volume mode.", 1),
      ],
      cells: (o, now) => {
        const spec = asMap(o.spec);
        const claim = asMap(spec.claimRef);
        const status = asMap(o.status);
        return [
          nameOf(o),
          String(asMap(spec.capacity).storage ?? ""),
          accessModes(spec.accessModes),
          String(spec.persistentVolumeReclaimPolicy ?? ""),
          String(status.phase ?? ""),
          claim.name ? `${String(claim.namespace)}/${String(claim.name)}` : "",
          String(spec.storageClassName ?? ""),
          String(spec.volumeAttributesClassName ?? "<unset>"),
          String(status.reason ?? ""),
          ageOf(created(o), now),
          String(spec.volumeMode ?? "<unset>"),
        ];
      },
    },
  ],
  [
    "/ResourceQuota",
    {
      columns: [
        NAME,
        column(
          "Request",
          "string",
          "Request represents a minimum amount of cpu/memory that a container may consume.",
        ),
        column(
          "Limit",
          "string",
          "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.",
        ),
        AGE,
      ],
      cells: quotaCells,
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
  ["rbac.authorization.k8s.io/RoleBinding", bindingPrinter()],
  ["rbac.authorization.k8s.io/ClusterRoleBinding", bindingPrinter()],
  [
    "networking.k8s.io/Ingress",
    {
      columns: [
        NAME,
        column("Class", "string", "The ingress class."),
        column("Hosts", "string", "Hosts that incoming requests are matched against before the ingress rule"),
        column("Address", "string", "Address is a list containing ingress points for the load-balancer"),
        column("Ports", "string", "Ports of TLS configurations that open"),
        AGE,
      ],
      cells: ingressCells,
    },
  ],
  [
    "networking.k8s.io/IngressClass",
    {
      columns: [
        NAME,
        column("Controller", "string", "The controller that implements the class."),
        column("Parameters", "string", "The parameters of the class."),
        AGE,
      ],
      cells: (o, now) => {
        const spec = asMap(o.spec);
        const p = asMap(spec.parameters);
        const parameters = spec.parameters
          ? `${String(p.kind)}${p.apiGroup ? `.${String(p.apiGroup)}` : ""}/${String(p.name)}`
          : "<none>";
        const isDefault =
          asMap(asMap(o.metadata).annotations)["ingressclass.kubernetes.io/is-default-class"] === "true";
        return [
          `${nameOf(o)}${isDefault ? " (default)" : ""}`,
          String(spec.controller ?? ""),
          parameters,
          ageOf(created(o), now),
        ];
      },
    },
  ],
  [
    "networking.k8s.io/NetworkPolicy",
    {
      columns: [NAME, column("Pod-Selector", "string", "The pods the policy applies to."), AGE],
      cells: (o, now) => [nameOf(o), formatLabelSelector(asMap(o.spec).podSelector), ageOf(created(o), now)],
    },
  ],
  [
    "policy/PodDisruptionBudget",
    {
      columns: [
        NAME,
        column("Min Available", "string", "The minimum number of pods that must be available."),
        column("Max Unavailable", "string", "The maximum number of pods that may be unavailable."),
        column(
          "Allowed Disruptions",
          "integer",
          "Calculated number of pods that may be disrupted at this time.",
        ),
        AGE,
      ],
      cells: (o, now) => {
        const spec = asMap(o.spec);
        const text = (v: Json | undefined) => (v === undefined || v === null ? "N/A" : String(v));
        return [
          nameOf(o),
          text(spec.minAvailable),
          text(spec.maxUnavailable),
          int(asMap(o.status).disruptionsAllowed),
          ageOf(created(o), now),
        ];
      },
    },
  ],
  [
    "coordination.k8s.io/Lease",
    {
      columns: [NAME, column("Holder", "string", "The holder of the lease."), AGE],
      cells: (o, now) => [nameOf(o), String(asMap(o.spec).holderIdentity ?? ""), ageOf(created(o), now)],
    },
  ],
]);

function nameOf(o: JsonMap): string {
  return String(asMap(o.metadata).name ?? "");
}

function created(o: JsonMap): Json | undefined {
  return asMap(o.metadata).creationTimestamp;
}

function int(value: Json | undefined): number {
  return typeof value === "number" ? Math.trunc(value) : 0;
}

// CONTAINERS and IMAGES of a pod template: the names and images, comma-separated.
function template(spec: JsonMap): [string, string] {
  const containers = asList(asMap(asMap(spec.template).spec).containers).map(asMap);
  return [
    containers.map((c) => String(c.name ?? "")).join(","),
    containers.map((c) => String(c.image ?? "")).join(","),
  ];
}

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

function externalIp(o: JsonMap): string {
  const spec = asMap(o.spec);
  const external = asList(spec.externalIPs).map(String);
  const balancers = [
    ...new Set(
      asList(asMap(asMap(o.status).loadBalancer).ingress)
        .map(asMap)
        .map((i) => String(i.ip || i.hostname || ""))
        .filter(Boolean),
    ),
  ].sort();
  switch (spec.type) {
    case "ClusterIP":
    case "NodePort":
      return external.length > 0 ? external.join(",") : "<none>";
    case "LoadBalancer":
      if (balancers.length + external.length > 0) return [...balancers, ...external].join(",");
      return "<pending>";
    case "ExternalName":
      return String(spec.externalName ?? "");
    default:
      return "<unknown>";
  }
}

function endpointsText(o: JsonMap): string {
  const subsets = asList(o.subsets).map(asMap);
  if (subsets.length === 0) return "<none>";
  const list: string[] = [];
  let count = 0;
  for (const subset of subsets) {
    const addresses = asList(subset.addresses).map((a) => String(asMap(a).ip ?? ""));
    const ports = asList(subset.ports).map(asMap);
    const pairs =
      ports.length === 0
        ? addresses
        : ports.flatMap((p) => addresses.map((ip) => `${ip.includes(":") ? `[${ip}]` : ip}:${int(p.port)}`));
    count += pairs.length;
    for (const pair of pairs) if (list.length < 3) list.push(pair);
  }
  return count > 3 ? `${list.join(",")} + ${count - 3} more...` : list.join(",");
}

function nodeCells(o: JsonMap, now: Date): Json[] {
  const status = asMap(o.status);
  const ready = asList(status.conditions)
    .map(asMap)
    .find((c) => c.type === "Ready");
  const states = ready ? [ready.status === "True" ? "Ready" : "NotReady"] : ["Unknown"];
  if (asMap(o.spec).unschedulable === true) states.push("SchedulingDisabled");
  const roles = [
    ...new Set(
      Object.entries(asMap(asMap(o.metadata).labels)).flatMap(([key, value]) => {
        if (key.startsWith("node-role.kubernetes.io/"))
          return key.slice("node-role.kubernetes.io/".length) || [];
        return key === "kubernetes.io/role" && value !== "" ? [String(value)] : [];
      }),
    ),
  ].sort();
  const info = asMap(status.nodeInfo);
  const address = (type: string) =>
    String(
      asList(status.addresses)
        .map(asMap)
        .find((a) => a.type === type)?.address ?? "<none>",
    );
  const kernel = `${String(info.kernelVersion || "<unknown>")}${info.architecture ? ` (${String(info.architecture)})` : ""}`;
  return [
    nameOf(o),
    states.join(","),
    roles.join(",") || "<none>",
    ageOf(created(o), now),
    String(info.kubeletVersion ?? ""),
    address("InternalIP"),
    address("ExternalIP"),
    String(info.osImage || "<unknown>"),
    kernel,
    String(info.containerRuntimeVersion || "<unknown>"),
  ];
}

function eventCells(o: JsonMap, now: Date): Json[] {
  const first = o.firstTimestamp ? ageOf(o.firstTimestamp, now) : ageOf(o.eventTime, now);
  const series = asMap(o.series);
  const last = o.series
    ? ageOf(series.lastObservedTime, now)
    : o.lastTimestamp
      ? ageOf(o.lastTimestamp, now)
      : first;
  const count = o.series ? int(series.count) : int(o.count) || 1;
  const involved = asMap(o.involvedObject);
  const kind = String(involved.kind ?? "").toLowerCase();
  const target = involved.name ? `${kind}/${String(involved.name)}` : kind;
  const source = asMap(o.source);
  const component = String(source.component || o.reportingComponent || "");
  const instance = String(source.host || o.reportingInstance || "");
  return [
    last,
    String(o.type ?? ""),
    String(o.reason ?? ""),
    target,
    String(involved.fieldPath ?? ""),
    instance ? `${component}, ${instance}` : component,
    String(o.message ?? "").trim(),
    first,
    count,
    nameOf(o),
  ];
}

function pvcCells(o: JsonMap, now: Date): Json[] {
  const spec = asMap(o.spec);
  const status = asMap(o.status);
  const bound = Boolean(spec.volumeName);
  const phase = asMap(o.metadata).deletionTimestamp ? "Terminating" : String(status.phase ?? "");
  const storageClass = String(
    spec.storageClassName ??
      asMap(asMap(o.metadata).annotations)["volume.beta.kubernetes.io/storage-class"] ??
      "",
  );
  return [
    nameOf(o),
    phase,
    String(spec.volumeName ?? ""),
    bound ? String(asMap(status.capacity).storage ?? "") : "",
    bound ? accessModes(status.accessModes) : "",
    storageClass,
    String(spec.volumeAttributesClassName ?? "<unset>"),
    ageOf(created(o), now),
    String(spec.volumeMode ?? "<unset>"),
  ];
}

// "RWO,ROX": the access modes' short names, in the API's order.
function accessModes(modes: Json | undefined): string {
  const short: Record<string, string> = {
    ReadWriteOnce: "RWO",
    ReadOnlyMany: "ROX",
    ReadWriteMany: "RWX",
    ReadWriteOncePod: "RWOP",
  };
  const given = new Set(asList(modes).map(String));
  return Object.keys(short)
    .filter((mode) => given.has(mode))
    .map((mode) => short[mode])
    .join(",");
}

function quotaCells(o: JsonMap, now: Date): Json[] {
  const { hard, used } = asMap(o.status);
  const requests: string[] = [];
  const limits: string[] = [];
  for (const resource of Object.keys(asMap(hard)).sort()) {
    const line = `${resource}: ${String(asMap(used)[resource] ?? "0")}/${String(asMap(hard)[resource])}`;
    (resource.startsWith("limits.") ? limits : requests).push(line);
  }
  return [nameOf(o), requests.join(", "), limits.join(", "), ageOf(created(o), now)];
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

function bindingPrinter(): Printer {
  return {
    columns: [
      NAME,
      column(
        "Role",
        "string",
        "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace.",
      ),
      AGE,
      column("Users", "string", "Users in the binding", 1),
      column("Groups", "string", "Groups in the binding", 1),
      column("ServiceAccounts", "string", "ServiceAccounts in the binding", 1),
    ],
    cells: (o, now) => {
      const ref = asMap(o.roleRef);
      const subjects = asList(o.subjects).map(asMap);
      const of = (kind: string, text: (s: JsonMap) => string) =>
        subjects
          .filter((s) => s.kind === kind)
          .map(text)
          .join(", ");
      return [
        nameOf(o),
        `${String(ref.kind ?? "")}/${String(ref.name ?? "")}`,
        ageOf(created(o), now),
        of("User", (s) => String(s.name)),
        of("Group", (s) => String(s.name)),
        of("ServiceAccount", (s) => `${String(s.namespace ?? "")}/${String(s.name)}`),
      ];
    },
  };
}

function ingressCells(o: JsonMap, now: Date): Json[] {
  const spec = asMap(o.spec);
  const rules = asList(spec.rules).map(asMap);
  // At most three hosts; a rule after the third host makes "+ N more..." (N counting every rule past three).
  const shown: string[] = [];
  let more = false;
  for (const rule of rules) {
    if (shown.length === 3) more = true;
    if (!more && rule.host) shown.push(String(rule.host));
  }
  const hostText =
    shown.length === 0 ? "*" : `${shown.join(",")}${more ? ` + ${rules.length - 3} more...` : ""}`;
  const addresses = [
    ...new Set(
      asList(asMap(asMap(o.status).loadBalancer).ingress)
        .map(asMap)
        .map((i) => String(i.ip || i.hostname || ""))
        .filter(Boolean),
    ),
  ].sort();
  return [
    nameOf(o),
    String(spec.ingressClassName ?? "<none>"),
    hostText,
    addresses.join(","),
    asList(spec.tls).length > 0 ? "80, 443" : "80",
    ageOf(created(o), now),
  ];
}
