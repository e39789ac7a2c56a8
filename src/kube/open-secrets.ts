import type { SopsKeyring } from "../credentials/sops-keyring.js";
import type { FleetModel } from "../model/types.js";
import {
  type OpenedSecret,
  type OpenedSecrets,
  openedSecret,
  sealedSecrets,
} from "../sync/sealed-secrets.js";

/**
 * The fleet's sops-encrypted Secrets opened with the operator's age keys, just before a sync applies
 * them: each Secret's values, or why its file cannot be opened (no key of its recipients, a MAC that
 * does not match). Without a keyring nothing is opened, and the sync reports each such Secret
 * instead of applying it. The values go only into what is applied.
 */
export async function openSecrets(
  model: FleetModel,
  keyring: SopsKeyring | undefined,
): Promise<OpenedSecrets> {
  const opened = new Map<string, OpenedSecret>();
  if (!keyring) return opened;
  for (const { identity, resource } of sealedSecrets(model)) {
    const envelope = resource.sealed?.envelope;
    if (!envelope) continue;
    try {
      opened.set(identity, openedSecret(resource, await keyring.open(envelope)));
    } catch (error) {
      opened.set(identity, { error: error instanceof Error ? error.message : String(error) });
    }
  }
  return opened;
}
