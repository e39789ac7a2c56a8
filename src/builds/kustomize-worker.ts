import { type MessagePort, parentPort, receiveMessageOnPort, workerData } from "node:worker_threads";
import { buildKustomization } from "../manifests/kustomize/build-kustomization.js";
import { transferBuild } from "../manifests/kustomize/built-transfer.js";
import type { FileTree } from "../model/file-tree.js";
import { RecordingTree } from "../model/tree-digest.js";
import type { BuildRequest, BuildWorkerData, FileAnswer } from "./kustomize-protocol.js";

// Kustomize builds in a worker thread of their own, so that a large or hostile build never holds the
// controller's event loop (its probes, its lease, its HTTP server): the controller gives each build
// a time and a memory bound and ends the worker past them. The fleet's files are asked for one at a
// time as the build reads them (the thread waits on a shared flag for each answer), so a build of one
// app never copies the whole repository.

const { files, signal } = workerData as BuildWorkerData;
const flag = new Int32Array(signal);

/** The fleet tree as the controller holds it: its paths known, each file's bytes asked for once. */
class RemoteTree implements FileTree {
  private readonly bytes = new Map<string, Uint8Array | undefined>();

  constructor(
    private readonly generation: number,
    private readonly paths: ReadonlySet<string>,
  ) {}

  get size(): number {
    return this.paths.size;
  }
  has(path: string): boolean {
    return this.paths.has(path);
  }
  get(path: string): Uint8Array | undefined {
    if (!this.paths.has(path)) return undefined;
    if (this.bytes.has(path)) return this.bytes.get(path);
    const answer = ask(files, { generation: this.generation, path });
    this.bytes.set(path, answer);
    return answer;
  }
  forEach(callback: (value: Uint8Array, key: string, map: ReadonlyMap<string, Uint8Array>) => void): void {
    for (const [key, value] of this.entries())
      callback(value, key, this as unknown as ReadonlyMap<string, Uint8Array>);
  }
  *entries(): MapIterator<[string, Uint8Array]> {
    for (const path of this.paths) yield [path, this.get(path) ?? new Uint8Array()];
  }
  keys(): MapIterator<string> {
    return this.paths.values();
  }
  *values(): MapIterator<Uint8Array> {
    for (const [, value] of this.entries()) yield value;
  }
  [Symbol.iterator](): MapIterator<[string, Uint8Array]> {
    return this.entries();
  }
}

// One file from the controller: asked on the files port, waited for on the shared flag.
function ask(port: MessagePort, question: { generation: number; path: string }): Uint8Array | undefined {
  Atomics.store(flag, 0, 0);
  port.postMessage(question);
  Atomics.wait(flag, 0, 0);
  const answer = receiveMessageOnPort(port)?.message as FileAnswer | undefined;
  return answer?.bytes;
}

let known: { generation: number; paths: Set<string> } | undefined;

parentPort?.on("message", (request: BuildRequest) => {
  if (request.paths) known = { generation: request.generation, paths: new Set(request.paths) };
  if (!known || known.generation !== request.generation) {
    parentPort?.postMessage({ id: request.id, failure: "the tree's paths were not given" });
    return;
  }
  const recording = new RecordingTree(new RemoteTree(known.generation, known.paths));
  const result = buildKustomization(recording, request.dir, { maxObjects: request.maxObjects });
  parentPort?.postMessage({ id: request.id, build: transferBuild(result, [...recording.seen]) });
});
