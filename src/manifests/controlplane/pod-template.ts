import type { JsonMap } from "../../apimachinery/json.js";
import type { HostedControlPlane } from "../../model/controlplane/hosted-control-plane.js";
import type { Labels } from "../../model/types.js";

/** The non-root identity every control-plane container runs as (its volumes are group-readable). */
const USER = 65532;

/** What one control-plane container needs: the rest of its pod is the same for every component. */
export interface ContainerSpec {
  readonly name: string;
  readonly image: string;
  readonly command: readonly string[];
  readonly args: readonly string[];
  readonly ports: readonly { readonly name: string; readonly containerPort: number }[];
  /** An HTTP(S) GET the component answers when ready. */
  readonly readiness: { readonly path: string; readonly port: number; readonly scheme: "HTTP" | "HTTPS" };
  /** An HTTP(S) GET the component answers while alive; default the readiness check. */
  readonly liveness?: { readonly path: string; readonly port: number; readonly scheme: "HTTP" | "HTTPS" };
  readonly requests: { readonly cpu: string; readonly memory: string };
  readonly volumeMounts: readonly JsonMap[];
  readonly env?: readonly JsonMap[];
}

/**
 * A control-plane pod template: non-root, read-only root filesystem, no privilege escalation, and —
 * for a host exposed by HostPort — on the host node's network with its nodeSelector.
 */
export function podTemplate(
  plane: HostedControlPlane,
  labels: Labels,
  container: ContainerSpec,
  volumes: readonly JsonMap[],
): JsonMap {
  const hostNetwork = plane.expose.type === "HostPort";
  const probe = (check: ContainerSpec["readiness"], period: number, failures: number) => ({
    httpGet: { path: check.path, port: check.port, scheme: check.scheme },
    periodSeconds: period,
    timeoutSeconds: 5,
    failureThreshold: failures,
  });
  return {
    metadata: { labels: { ...labels } },
    spec: {
      ...(hostNetwork
        ? {
            hostNetwork: true,
            dnsPolicy: "ClusterFirstWithHostNet",
            ...(plane.expose.nodeSelector ? { nodeSelector: { ...plane.expose.nodeSelector } } : {}),
          }
        : {}),
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      priorityClassName: "system-cluster-critical",
      securityContext: {
        runAsNonRoot: true,
        runAsUser: USER,
        runAsGroup: USER,
        fsGroup: USER,
        seccompProfile: { type: "RuntimeDefault" },
      },
      containers: [
        {
          name: container.name,
          image: container.image,
          imagePullPolicy: "IfNotPresent",
          command: [...container.command],
          args: [...container.args],
          ...(container.env ? { env: [...container.env] } : {}),
          ports: container.ports.map((port) => ({ ...port, protocol: "TCP" })),
          readinessProbe: probe(container.readiness, 5, 3),
          livenessProbe: {
            ...probe(container.liveness ?? container.readiness, 10, 8),
            initialDelaySeconds: 10,
          },
          resources: { requests: { ...container.requests } },
          securityContext: {
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ["ALL"] },
          },
          volumeMounts: [...container.volumeMounts],
        },
      ],
      volumes: [...volumes],
    },
  };
}

/**
 * The pod template of a Job's run-once container: podTemplate's, without probes or ports, with the
 * restart policy given.
 */
export function jobPodTemplate(
  plane: HostedControlPlane,
  labels: Labels,
  container: ContainerSpec,
  volumes: readonly JsonMap[],
  restartPolicy: "Never" | "OnFailure",
): JsonMap {
  const template = podTemplate(plane, labels, container, volumes);
  const spec = template.spec as JsonMap;
  const [first] = spec.containers as JsonMap[];
  const { readinessProbe: _r, livenessProbe: _l, ports: _p, ...job } = first as JsonMap;
  return { ...template, spec: { ...spec, restartPolicy, containers: [job] } };
}

/** The image of a control-plane component: <registry>/<name>:<tag>. */
export function imageOf(plane: HostedControlPlane, name: string, tag: string): string {
  return `${plane.registry}/${name}:${tag}`;
}
