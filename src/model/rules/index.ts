import { hasErrors } from "../problem.js";
import { checkClusterConnections } from "./cluster-connections.js";
import { checkControlPlaneUpgrades } from "./control-plane-upgrades.js";
import { checkDuplicateResources } from "./duplicate-resources.js";
import { checkEtcdMemberReplacements } from "./etcd-member-replacements.js";
import { checkEtcdRestores } from "./etcd-restores.js";
import { checkFieldCombinations } from "./field-combinations.js";
import { checkFileNames } from "./file-names.js";
import { checkFleetQuotas } from "./fleet-quotas.js";
import { checkHostedControlPlanes } from "./hosted-control-planes.js";
import { checkInterpreters } from "./interpreters.js";
import { checkLabelSelectors } from "./label-selectors.js";
import { checkManifestContent } from "./manifest-content.js";
import { checkManifestSchemas } from "./manifest-schemas.js";
import { checkNodePools } from "./node-pools.js";
import { checkNotifications } from "./notifications.js";
import { checkBackupRetention, checkOffHostBackups } from "./off-host-backups.js";
import { checkPlacementPriority } from "./placement-priority.js";
import { checkPodNetworks } from "./pod-networks.js";
import { checkReferences } from "./references.js";
import type { Rule, RuleContext } from "./rule.js";
import { checkScaleTargets } from "./scale-targets.js";
import { checkSchedulerProfiles } from "./scheduler-profiles.js";
import { checkSelections } from "./selections.js";
import { checkServiceExports } from "./service-exports.js";
import { checkSopsRecipients } from "./sops-recipients.js";
import { checkSyncOrder } from "./sync-order.js";
import { checkTeamBounds } from "./team-bounds.js";
import { checkUniqueNames } from "./unique-names.js";

/** Every cross-file rule, in a fixed order (problems are sorted afterwards, so order only affects speed). */
export const RULES: readonly Rule[] = [
  checkUniqueNames,
  checkFileNames,
  checkClusterConnections,
  checkDuplicateResources,
  checkInterpreters,
  checkReferences,
  checkLabelSelectors,
  checkFieldCombinations,
  checkManifestContent,
  checkManifestSchemas,
  checkScaleTargets,
  checkPlacementPriority,
  checkSchedulerProfiles,
  checkHostedControlPlanes,
  checkNodePools,
  checkPodNetworks,
  checkOffHostBackups,
  checkBackupRetention,
  checkControlPlaneUpgrades,
  checkEtcdRestores,
  checkEtcdMemberReplacements,
  checkNotifications,
  checkSyncOrder,
  checkServiceExports,
  checkFleetQuotas,
  checkTeamBounds,
  checkSopsRecipients,
];

/**
 * Runs every rule over the model. The "selects nothing" warnings run only on an otherwise error-free
 * repo: with a Placement or an app dropped for an error they would report false alarms.
 */
export function runRules(context: RuleContext): void {
  for (const rule of RULES) rule(context);
  if (!hasErrors(context.reporter.problems)) checkSelections(context);
}
