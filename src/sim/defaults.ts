import { asList, asMap, isJsonMap, type JsonMap } from "../apimachinery/json.js";

// The defaults the API server fills in when a Deployment is written, as apps/v1 defaulting does
// (SetDefaults_Deployment and the pod template's SetDefaults_PodSpec / SetDefaults_Container):
// readers — gitfleet's drift check, `gitfleet plan`'s comparison with what runs — see the same
// object from a simulated member as from a real one. Pure.

/** The object with the server's defaults filled in where it has none. */
export function withServerDefaults(group: string, kind: string, object: JsonMap): JsonMap {
  if (group === "" && kind === "Secret") return secretDefaults(object);
  if (group !== "apps" || kind !== "Deployment") return object;
  const spec = asMap(object.spec);
  const strategy = asMap(spec.strategy);
  const type = typeof strategy.type === "string" ? strategy.type : "RollingUpdate";
  return {
    ...object,
    spec: {
      replicas: 1,
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
      ...spec,
      strategy:
        type === "RollingUpdate"
          ? {
              ...strategy,
              type,
              rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%", ...asMap(strategy.rollingUpdate) },
            }
          : { ...strategy, type },
      template: podTemplateDefaults(asMap(spec.template)),
    },
    status: isJsonMap(object.status) ? object.status : {},
  };
}

// A Secret's stringData is write-only: the API server merges it into data (base64, over any data of
// the same key) and never stores it; its type defaults to Opaque.
function secretDefaults(object: JsonMap): JsonMap {
  const { stringData, ...rest } = object;
  const written = isJsonMap(stringData)
    ? Object.fromEntries(
        Object.entries(stringData).map(([k, v]) => [k, Buffer.from(String(v)).toString("base64")]),
      )
    : {};
  const data = { ...asMap(object.data), ...written };
  return {
    ...rest,
    type: typeof object.type === "string" ? object.type : "Opaque",
    ...(Object.keys(data).length > 0 || object.data !== undefined ? { data } : {}),
  };
}

function podTemplateDefaults(template: JsonMap): JsonMap {
  const spec = asMap(template.spec);
  return {
    ...template,
    spec: {
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 30,
      dnsPolicy: "ClusterFirst",
      securityContext: {},
      schedulerName: "default-scheduler",
      ...spec,
      containers: asList(spec.containers).map((c) => containerDefaults(asMap(c))),
      ...(Array.isArray(spec.initContainers)
        ? { initContainers: spec.initContainers.map((c) => containerDefaults(asMap(c))) }
        : {}),
    },
  };
}

function containerDefaults(container: JsonMap): JsonMap {
  const image = typeof container.image === "string" ? container.image : "";
  // An image without a tag, or tagged latest, is pulled every time; any other, if not present.
  const tag = image.includes("@") ? "digest" : (/:([^/:]+)$/.exec(image)?.[1] ?? "");
  return {
    terminationMessagePath: "/dev/termination-log",
    terminationMessagePolicy: "File",
    imagePullPolicy: tag === "" || tag === "latest" ? "Always" : "IfNotPresent",
    resources: {},
    ...container,
    ...(Array.isArray(container.ports)
      ? { ports: container.ports.map((p) => ({ protocol: "TCP", ...asMap(p) })) }
      : {}),
  };
}
