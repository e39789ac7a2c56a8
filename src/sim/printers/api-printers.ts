import { asList, asMap, type Json, type JsonMap } from "../../apimachinery/json.js";
import { AGE, column, created, int, NAME, nameOf, type Printer } from "./columns.js";
import { ageOf, humanDuration } from "./human-duration.js";
import { formatLabelSelector } from "./selector-text.js";

/** kube-apiserver's printers for access, networking, disruption and coordination kinds. */
export const API_PRINTERS: readonly (readonly [string, Printer])[] = [
  [
    "scheduling.k8s.io/PriorityClass",
    {
      columns: [
        NAME,
        column("Value", "integer", "The value of this priority class."),
        column(
          "Global-Default",
          "boolean",
          "Whether this priority class is the default for pods without one.",
        ),
        AGE,
        column("PreemptionPolicy", "string", "The policy for preempting pods with lower priority.", 1),
      ],
      cells: (o, now) => [
        nameOf(o),
        int(o.value),
        o.globalDefault === true,
        ageOf(created(o), now),
        String(o.preemptionPolicy ?? "PreemptLowerPriority"),
      ],
    },
  ],
  [
    "certificates.k8s.io/CertificateSigningRequest",
    {
      columns: [
        NAME,
        AGE,
        column("SignerName", "string", "The signer the request asks to sign it."),
        column("Requestor", "string", "The user who created the request."),
        column("RequestedDuration", "string", "The validity the request asks for."),
        column("Condition", "string", "The state of the request."),
      ],
      cells: (o, now) => {
        const spec = asMap(o.spec);
        const seconds = typeof spec.expirationSeconds === "number" ? spec.expirationSeconds : undefined;
        return [
          nameOf(o),
          ageOf(created(o), now),
          String(spec.signerName ?? ""),
          String(spec.username ?? ""),
          seconds === undefined ? "<none>" : humanDuration(seconds * 1000),
          csrCondition(o),
        ];
      },
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
];

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

// "Pending", or the request's condition types ("Approved", "Denied") with "Issued" once it has a certificate.
function csrCondition(o: JsonMap): string {
  const status = asMap(o.status);
  const types = asList(status.conditions).map((c) => String(asMap(c).type));
  if (status.certificate) types.push("Issued");
  return types.length === 0 ? "Pending" : types.join(",");
}
