import { asList, asMap, type Json, type JsonMap } from "../../apimachinery/json.js";
import { AGE, column, created, int, NAME, nameOf, type Printer } from "./columns.js";
import { ageOf } from "./human-duration.js";
import { formatLabels } from "./selector-text.js";

/** kube-apiserver's printers for the kinds around workloads: services, nodes, events, configuration, storage. */
export const CORE_PRINTERS: readonly (readonly [string, Printer])[] = [
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
];

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
