#!/usr/bin/env node
// Writes each chart's values.schema.json (charts/gitfleet, charts/gitfleet-agent) from its values.yaml: every value typed as its
// default is (helm then refuses `--set replicaCount=two` or `sync: "yes"` before rendering), the
// sections gitfleet defines closed to unknown keys (a typo such as `replicaCont` is an error, not
// ignored), and the choices and item types below that a default cannot show. Sections that are
// Kubernetes' own (resources, security contexts, affinity, annotations, volumes) stay open.
// `node scripts/chart-values-schema.mjs --check` exits 1 when the file differs (a test runs it).
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";

/** Values Kubernetes defines: any object (or list of objects) is taken as it is. */
const OPEN = new Set([
  "resources",
  "podSecurityContext",
  "securityContext",
  "podAnnotations",
  "podLabels",
  "nodeSelector",
  "affinity",
  "serviceAccount.annotations",
  "service.annotations",
  "ingress.annotations",
  "serviceMonitor.labels",
  "prometheusRule.labels",
]);

/** What a default cannot say: choices, the items of lists that default to empty, unions. */
const SHAPES = {
  "image.pullPolicy": { type: "string", enum: ["Always", "IfNotPresent", "Never"] },
  imagePullSecrets: { type: "array", items: { type: "object" } },
  "credentials.gitAuth": { type: "string", enum: ["env", "file", "githubApp", "ssh"] },
  // `--set credentials.githubApp.appId=12345` gives a number.
  "credentials.githubApp.appId": { type: ["string", "integer"] },
  "credentials.githubApp.installationId": { type: ["string", "integer"] },
  "forge.kind": { type: "string", enum: ["", "github", "gitlab", "gitea", "forgejo"] },
  "access.oidc.scopes": { type: "array", items: { type: "string" } },
  extraVolumes: { type: "array", items: { type: "object" } },
  extraVolumeMounts: { type: "array", items: { type: "object" } },
  logLevel: { type: "string", enum: ["trace", "debug", "info", "warn", "error"] },
  "builds.chartSources": { type: "array", items: { type: "string" } },
  "builds.allowHookKinds": { type: "array", items: { type: "string" } },
  "builds.teamSources": {
    type: "array",
    items: {
      type: "object",
      required: ["url"],
      additionalProperties: false,
      properties: { url: { type: "string" }, tokenKey: { type: "string" } },
    },
  },
  backupStores: {
    type: "array",
    items: {
      type: "object",
      required: ["name", "existingSecret"],
      additionalProperties: false,
      properties: {
        name: { type: "string", pattern: "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$" },
        existingSecret: { type: "string", minLength: 1 },
      },
    },
  },
  extraArgs: { type: "array", items: { type: "string" } },
  extraEnv: { type: "array", items: { type: "object" } },
  "service.type": { type: "string", enum: ["ClusterIP", "NodePort", "LoadBalancer"] },
  "http.allowedHosts": { type: "array", items: { type: "string" } },
  "podDisruptionBudget.maxUnavailable": { type: ["integer", "string"] },
  tolerations: { type: "array", items: { type: "object" } },
  topologySpreadConstraints: { type: "array", items: { type: "object" } },
  "networkPolicy.ingressFrom": { type: "array", items: { type: "object" } },
};

/** The agent chart's: its own choices, the rest as the controller chart's. */
const AGENT_SHAPES = {
  ...SHAPES,
  "credentials.gitAuth": { type: "string", enum: ["file", "ssh", "none"] },
  "credentials.trustedKeysFormat": { type: "string", enum: ["ssh", "openpgp"] },
  "rbac.rules": { type: "array", items: { type: "object" } },
};

const CHARTS = [
  { name: "gitfleet", shapes: SHAPES, title: "gitfleet chart values" },
  { name: "gitfleet-agent", shapes: AGENT_SHAPES, title: "gitfleet-agent chart values" },
];

function schemaOf(value, path, shapes) {
  if (shapes[path]) return shapes[path];
  if (OPEN.has(path)) return { type: "object" };
  if (typeof value === "boolean") return { type: "boolean" };
  if (typeof value === "number") return { type: Number.isInteger(value) ? "integer" : "number" };
  if (typeof value === "string") return { type: "string" };
  if (Array.isArray(value)) throw new Error(`${path}: a list needs its item type in SHAPES`);
  if (value && typeof value === "object")
    return {
      type: "object",
      additionalProperties: false,
      properties: Object.fromEntries(
        Object.entries(value).map(([key, child]) => [
          key,
          schemaOf(child, path ? `${path}.${key}` : key, shapes),
        ]),
      ),
    };
  throw new Error(`${path}: a null default says nothing of its type`);
}

let stale = false;
for (const { name, shapes, title } of CHARTS) {
  const chart = fileURLToPath(new URL(`../charts/${name}/`, import.meta.url));
  const values = parse(readFileSync(`${chart}values.yaml`, "utf8"));
  const schema = {
    $schema: "https://json-schema.org/draft-07/schema#",
    title,
    description: "Generated from values.yaml by scripts/chart-values-schema.mjs.",
    ...schemaOf(values, "", shapes),
  };
  const text = `${JSON.stringify(schema, null, 2)}\n`;
  const file = `${chart}values.schema.json`;
  if (process.argv.includes("--check")) {
    let current = "";
    try {
      current = readFileSync(file, "utf8");
    } catch {}
    if (current !== text) {
      console.error(
        `charts/${name}/values.schema.json is not what values.yaml gives: run node scripts/chart-values-schema.mjs`,
      );
      stale = true;
    }
  } else writeFileSync(file, text);
}
if (stale) process.exit(1);
