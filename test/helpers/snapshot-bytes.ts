import { encodeSnapshot, type SnapshotHeader } from "../../src/controller/snapshot/snapshot-codec.js";

/** All of a snapshot's bytes in one buffer, as the store would write them. */
export async function encodeSnapshotBytes(
  header: SnapshotHeader,
  parts: Iterable<unknown>,
  key?: Uint8Array,
): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  await encodeSnapshot(header, parts, async (bytes) => void chunks.push(bytes), key);
  return Buffer.concat(chunks);
}
