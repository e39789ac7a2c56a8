import type { JsonMap } from "../../apimachinery/json.js";
import {
  controlPlaneLabels,
  type HostedControlPlane,
  hostPortsOf,
} from "../../model/controlplane/hosted-control-plane.js";
import { componentArgs } from "./component-args.js";
import {
  API_SERVER_PORT,
  CONTROLLER_MANAGER_PORT,
  type ControlPlaneEndpoints,
  controlPlaneEndpoints,
  SCHEDULER_PORT,
} from "./endpoints.js";
import { dedicatedEtcdObjects } from "./etcd-objects.js";
import {
  CA_CERTIFICATE,
  credentialPlaceholders,
  KUBECONFIG_PATH,
  type Mounted,
  PKI_DIR,
  PKI_SECRETS,
  pkiVolume,
} from "./pki-layout.js";
import { type ContainerSpec, imageOf, podTemplate } from "./pod-template.js";

/**
 * Everything of one hosted control plane that goes into its host, in the host's terms: its Namespace,
 * a dedicated etcd (StatefulSet, headless Service, backups), kube-apiserver (Deployment with readiness
 * on /readyz, Service of the expose type, PodDisruptionBudget), kube-controller-manager and
 * kube-scheduler (Deployments with their kubeconfigs). Secrets are mounted by name only: their
 * contents are generated in the host and never rendered. Pure.
 */
export function controlPlaneObjects(plane: HostedControlPlane): JsonMap[] {
  const endpoints = controlPlaneEndpoints(plane);
  return [
    {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: plane.namespace, labels: { ...controlPlaneLabels(plane) } },
    },
    ...credentialPlaceholders(
      plane.namespace,
      controlPlaneLabels(plane),
      Object.values(PKI_SECRETS).filter((secret) => secret.in === "control-plane"),
    ),
    ...(plane.etcd.mode === "Dedicated" ? dedicatedEtcdObjects(plane) : []),
    ...apiServerObjects(plane, endpoints),
    controllerManager(plane),
    scheduler(plane),
  ];
}

function apiServerObjects(plane: HostedControlPlane, endpoints: ControlPlaneEndpoints): JsonMap[] {
  const labels = controlPlaneLabels(plane, "kube-apiserver");
  const port = hostPortsOf(plane)["kube-apiserver"] ?? API_SERVER_PORT;
  const secrets: Mounted[] = [
    CA_CERTIFICATE,
    PKI_SECRETS.apiServer,
    PKI_SECRETS.frontProxyCa,
    PKI_SECRETS.frontProxyClient,
    PKI_SECRETS.serviceAccount,
    PKI_SECRETS.etcdClient,
  ];
  const container: ContainerSpec = {
    name: "kube-apiserver",
    image: imageOf(plane, "kube-apiserver", plane.apiServer.version),
    command: ["kube-apiserver"],
    args: componentArgs(apiServerDefaults(plane, endpoints, port), plane.apiServer.extraArgs),
    ports: [{ name: "https", containerPort: port }],
    readiness: { path: "/readyz", port, scheme: "HTTPS" },
    liveness: { path: "/livez", port, scheme: "HTTPS" },
    requests: { cpu: "250m", memory: "512Mi" },
    volumeMounts: [{ name: "pki", mountPath: PKI_DIR, readOnly: true }],
  };
  const hostPort = plane.expose.type === "HostPort";
  const deployment = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "kube-apiserver", namespace: plane.namespace, labels: { ...labels } },
    spec: {
      replicas: plane.stopped ? 0 : plane.apiServer.replicas,
      selector: { matchLabels: { ...labels } },
      // On a host port two API servers cannot share a node: replace one at a time.
      strategy: {
        type: "RollingUpdate",
        rollingUpdate: hostPort ? { maxSurge: 0, maxUnavailable: 1 } : { maxSurge: 1, maxUnavailable: 0 },
      },
      template: podTemplate(plane, labels, container, [pkiVolume("pki", secrets)]),
    },
  };
  const objects: JsonMap[] = [deployment];
  if (!hostPort) objects.push(apiServerService(plane, labels));
  if (plane.apiServer.replicas > 1)
    objects.push({
      apiVersion: "policy/v1",
      kind: "PodDisruptionBudget",
      metadata: { name: "kube-apiserver", namespace: plane.namespace, labels: { ...labels } },
      spec: { maxUnavailable: 1, selector: { matchLabels: { ...labels } } },
    });
  return objects;
}

function apiServerDefaults(
  plane: HostedControlPlane,
  endpoints: ControlPlaneEndpoints,
  port: number,
): Record<string, string> {
  const address = plane.expose.address;
  return {
    "allow-privileged": "true",
    ...(address && isIP(address) ? { "advertise-address": address } : {}),
    "authorization-mode": "Node,RBAC",
    "client-ca-file": `${PKI_DIR}/ca.crt`,
    "enable-admission-plugins": "NodeRestriction",
    "enable-bootstrap-token-auth": "true",
    "etcd-cafile": `${PKI_DIR}/etcd/ca.crt`,
    "etcd-certfile": `${PKI_DIR}/apiserver-etcd-client.crt`,
    "etcd-keyfile": `${PKI_DIR}/apiserver-etcd-client.key`,
    "etcd-prefix": `${plane.etcd.prefix}/registry`,
    "etcd-servers": endpoints.etcdServers.join(","),
    "kubelet-preferred-address-types": "InternalIP,ExternalIP,Hostname",
    profiling: "false",
    "proxy-client-cert-file": `${PKI_DIR}/front-proxy-client.crt`,
    "proxy-client-key-file": `${PKI_DIR}/front-proxy-client.key`,
    "requestheader-allowed-names": "front-proxy-client",
    "requestheader-client-ca-file": `${PKI_DIR}/front-proxy-ca.crt`,
    "requestheader-extra-headers-prefix": "X-Remote-Extra-",
    "requestheader-group-headers": "X-Remote-Group",
    "requestheader-username-headers": "X-Remote-User",
    "secure-port": String(port),
    "service-account-issuer": "https://kubernetes.default.svc.cluster.local",
    "service-account-key-file": `${PKI_DIR}/sa.pub`,
    "service-account-signing-key-file": `${PKI_DIR}/sa.key`,
    "service-cluster-ip-range": plane.serviceCIDR,
    "tls-cert-file": `${PKI_DIR}/apiserver.crt`,
    "tls-private-key-file": `${PKI_DIR}/apiserver.key`,
  };
}

function apiServerService(plane: HostedControlPlane, labels: Readonly<Record<string, string>>): JsonMap {
  const { expose } = plane;
  const nodePort = expose.type === "NodePort" && expose.port !== undefined ? { nodePort: expose.port } : {};
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "kube-apiserver", namespace: plane.namespace, labels: { ...labels } },
    spec: {
      type: expose.type,
      selector: { ...labels },
      ports: [{ name: "https", port: API_SERVER_PORT, targetPort: "https", protocol: "TCP", ...nodePort }],
      ...(expose.type === "LoadBalancer" && expose.address && isIP(expose.address)
        ? { loadBalancerIP: expose.address }
        : {}),
    },
  };
}

function controllerManager(plane: HostedControlPlane): JsonMap {
  const port = hostPortsOf(plane)["kube-controller-manager"] ?? CONTROLLER_MANAGER_PORT;
  const kubeconfig = KUBECONFIG_PATH;
  return kubeconfigComponent(plane, {
    name: "kube-controller-manager",
    version: plane.controllerManager.version,
    replicas: plane.controllerManager.replicas,
    kubeconfigSecret: PKI_SECRETS.controllerManagerKubeconfig.name,
    secrets: [PKI_SECRETS.ca, PKI_SECRETS.frontProxyCa, PKI_SECRETS.serviceAccount],
    port,
    requests: { cpu: "100m", memory: "128Mi" },
    args: componentArgs(
      {
        // With a pod network gitfleet renders, each node gets a /24 of its range (flannel reads it).
        ...(plane.cni
          ? { "allocate-node-cidrs": "true", "cluster-cidr": plane.cni.podCIDR, "node-cidr-mask-size": "24" }
          : { "allocate-node-cidrs": "false" }),
        "authentication-kubeconfig": kubeconfig,
        "authorization-kubeconfig": kubeconfig,
        "bind-address": "0.0.0.0",
        "client-ca-file": `${PKI_DIR}/ca.crt`,
        "cluster-name": plane.cluster,
        "cluster-signing-cert-file": `${PKI_DIR}/ca-signing.crt`,
        "cluster-signing-key-file": `${PKI_DIR}/ca.key`,
        controllers: "*,bootstrapsigner,tokencleaner",
        kubeconfig,
        "leader-elect": "true",
        profiling: "false",
        "requestheader-client-ca-file": `${PKI_DIR}/front-proxy-ca.crt`,
        "root-ca-file": `${PKI_DIR}/ca.crt`,
        "secure-port": String(port),
        "service-account-private-key-file": `${PKI_DIR}/sa.key`,
        "service-cluster-ip-range": plane.serviceCIDR,
        "use-service-account-credentials": "true",
      },
      plane.controllerManager.extraArgs,
    ),
  });
}

function scheduler(plane: HostedControlPlane): JsonMap {
  const port = hostPortsOf(plane)["kube-scheduler"] ?? SCHEDULER_PORT;
  const kubeconfig = KUBECONFIG_PATH;
  return kubeconfigComponent(plane, {
    name: "kube-scheduler",
    version: plane.scheduler.version,
    replicas: plane.scheduler.replicas,
    kubeconfigSecret: PKI_SECRETS.schedulerKubeconfig.name,
    secrets: [],
    port,
    requests: { cpu: "50m", memory: "64Mi" },
    args: componentArgs(
      {
        "authentication-kubeconfig": kubeconfig,
        "authorization-kubeconfig": kubeconfig,
        "bind-address": "0.0.0.0",
        kubeconfig,
        "leader-elect": "true",
        profiling: "false",
        "secure-port": String(port),
      },
      plane.scheduler.extraArgs,
    ),
  });
}

interface KubeconfigComponent {
  readonly name: string;
  readonly version: string;
  readonly replicas: number;
  readonly kubeconfigSecret: string;
  readonly secrets: readonly Mounted[];
  readonly port: number;
  readonly requests: ContainerSpec["requests"];
  readonly args: readonly string[];
}

// kube-controller-manager and kube-scheduler: a Deployment that reaches the API server through the
// kubeconfig Secret gitfleet generated for it, ready when its /healthz answers.
function kubeconfigComponent(plane: HostedControlPlane, component: KubeconfigComponent): JsonMap {
  const labels = controlPlaneLabels(plane, component.name);
  const volumes = [
    {
      name: "kubeconfig",
      secret: { secretName: component.kubeconfigSecret, defaultMode: 0o440 },
    },
    ...(component.secrets.length > 0 ? [pkiVolume("pki", component.secrets)] : []),
  ];
  const container: ContainerSpec = {
    name: component.name,
    image: imageOf(plane, component.name, component.version),
    command: [component.name],
    args: component.args,
    ports: [{ name: "https", containerPort: component.port }],
    readiness: { path: "/healthz", port: component.port, scheme: "HTTPS" },
    requests: component.requests,
    volumeMounts: [
      { name: "kubeconfig", mountPath: "/etc/kubernetes/kubeconfig", readOnly: true },
      ...(component.secrets.length > 0 ? [{ name: "pki", mountPath: PKI_DIR, readOnly: true }] : []),
    ],
  };
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: component.name, namespace: plane.namespace, labels: { ...labels } },
    spec: {
      replicas: plane.stopped ? 0 : component.replicas,
      selector: { matchLabels: { ...labels } },
      strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } },
      template: podTemplate(plane, labels, container, volumes),
    },
  };
}

/** An IPv4 or IPv6 address (not a DNS name). */
export function isIP(address: string): boolean {
  return /^([0-9]{1,3}\.){3}[0-9]{1,3}$/.test(address) || address.includes(":");
}
