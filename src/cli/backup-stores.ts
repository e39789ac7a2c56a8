import { join } from "node:path";
import { stageRestore } from "../backup/restore-stage.js";
import { parseBackupStore, readStoreFiles, readStoreIdentityFile } from "../backup/store-config.js";
import { ageIdentities } from "../credentials/sops-keyring.js";
import type { BackupStores } from "../kube/backup-store-secret.js";

/**
 * The operator's off-host backup stores of `gitfleet run --backup-stores-dir`: each store's directory
 * read (bounded) and checked at every host sync, so a rotated key or a new recipient reaches the next
 * backup; its identity file read only when a restore fetches, inside gitfleet.
 */
export function backupStoresIn(dir: string): BackupStores {
  return {
    async files(store) {
      const files = await readStoreFiles(join(dir, store));
      parseBackupStore(files);
      return files;
    },
    fetch: async (store, request) =>
      stageRestore({
        ...request,
        store: parseBackupStore(await readStoreFiles(join(dir, store))),
        identities: ageIdentities(await readStoreIdentityFile(join(dir, store))),
      }),
  };
}
