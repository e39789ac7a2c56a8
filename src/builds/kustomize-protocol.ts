import type { MessagePort } from "node:worker_threads";
import type { TransferredBuild } from "../manifests/kustomize/built-transfer.js";

/** What the build worker is started with: the port files are asked on, and the flag answers raise. */
export interface BuildWorkerData {
  readonly files: MessagePort;
  /** An Int32Array's buffer: the controller sets it to 1 once a file's answer is on the port. */
  readonly signal: SharedArrayBuffer;
}

/** One build: a kustomization directory of the tree of `generation` (its paths given when new). */
export interface BuildRequest {
  readonly id: number;
  readonly generation: number;
  readonly paths?: readonly string[];
  readonly dir: string;
  readonly maxObjects: number;
}

/** The worker's answer to a build. */
export type BuildAnswer =
  | { readonly id: number; readonly build: TransferredBuild }
  | { readonly id: number; readonly failure: string };

/** A file's bytes, or undefined when the tree has none at the path. */
export interface FileAnswer {
  readonly bytes: Uint8Array | undefined;
}
