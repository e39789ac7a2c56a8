import type { ErrorObject } from "ajv/dist/2020.js";
import app from "../../schema/app.schema.json" with { type: "json" };
import cluster from "../../schema/cluster.schema.json" with { type: "json" };
import common from "../../schema/common.schema.json" with { type: "json" };
import controlPlaneClass from "../../schema/control-plane-class.schema.json" with { type: "json" };
import controlPlaneUpgrade from "../../schema/control-plane-upgrade.schema.json" with { type: "json" };
import cronScale from "../../schema/cron-scale.schema.json" with { type: "json" };
import etcdMemberReplacement from "../../schema/etcd-member-replacement.schema.json" with { type: "json" };
import etcdRestore from "../../schema/etcd-restore.schema.json" with { type: "json" };
import federatedHpa from "../../schema/federated-hpa.schema.json" with { type: "json" };
import federatedResourceQuota from "../../schema/federated-resource-quota.schema.json" with { type: "json" };
import fleet from "../../schema/fleet.schema.json" with { type: "json" };
import migration from "../../schema/migration.schema.json" with { type: "json" };
import override from "../../schema/override.schema.json" with { type: "json" };
import placement from "../../schema/placement.schema.json" with { type: "json" };
import resourceInterpreter from "../../schema/resource-interpreter.schema.json" with { type: "json" };
import scaleDownRequest from "../../schema/scale-down-request.schema.json" with { type: "json" };
import team from "../../schema/team.schema.json" with { type: "json" };
import * as COMPILED from "./compiled-schemas.js";
import type { GitfleetKind } from "./types.js";

/** Every schema document in schema/, by file name: the reference documentation of the fleet repo format. */
export const SCHEMA_FILES: Readonly<Record<string, object>> = {
  "common.schema.json": common,
  "fleet.schema.json": fleet,
  "cluster.schema.json": cluster,
  "app.schema.json": app,
  "placement.schema.json": placement,
  "override.schema.json": override,
  "resource-interpreter.schema.json": resourceInterpreter,
  "federated-hpa.schema.json": federatedHpa,
  "cron-scale.schema.json": cronScale,
  "scale-down-request.schema.json": scaleDownRequest,
  "federated-resource-quota.schema.json": federatedResourceQuota,
  "team.schema.json": team,
  "migration.schema.json": migration,
  "control-plane-class.schema.json": controlPlaneClass,
  "control-plane-upgrade.schema.json": controlPlaneUpgrade,
  "etcd-restore.schema.json": etcdRestore,
  "etcd-member-replacement.schema.json": etcdMemberReplacement,
};

/** The schema of each gitfleet kind. */
export const KIND_SCHEMAS: Readonly<Record<GitfleetKind, object>> = {
  Fleet: fleet,
  Cluster: cluster,
  App: app,
  Placement: placement,
  Override: override,
  ResourceInterpreter: resourceInterpreter,
  FederatedHPA: federatedHpa,
  CronScale: cronScale,
  ScaleDownRequest: scaleDownRequest,
  FederatedResourceQuota: federatedResourceQuota,
  Team: team,
  Migration: migration,
  ControlPlaneClass: controlPlaneClass,
  ControlPlaneUpgrade: controlPlaneUpgrade,
  EtcdRestore: etcdRestore,
  EtcdMemberReplacement: etcdMemberReplacement,
};

/** One schema violation: where (a JSON pointer) and the raw ajv error, for wording by the caller. */
export type SchemaError = ErrorObject;

// A generated validator: true when valid, else its errors.
type CompiledValidator = ((value: unknown) => boolean) & { errors?: ErrorObject[] | null };

/** Validates one document against its kind's schema, returning every violation (never throws). */
export type KindValidator = (value: unknown) => readonly SchemaError[];

/** Returns the schema validator of a gitfleet kind (precompiled: model/compiled-schemas.ts). */
export function schemaValidator(kind: GitfleetKind): KindValidator {
  const validate = (COMPILED as Record<string, CompiledValidator | undefined>)[kind];
  if (!validate) throw new Error(`no schema for kind ${kind}`);
  return (value) => (validate(value) ? [] : [...(validate.errors ?? [])]);
}
