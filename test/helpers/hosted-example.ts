import { fileURLToPath } from "node:url";

/** The documented hosted-clusters example: meta-1 hosts pc-1 and pc-2 (shared etcd etcd-a). */
export const HOSTED_EXAMPLE_DIR = fileURLToPath(
  new URL("../../docs/examples/hosted-clusters", import.meta.url),
);
