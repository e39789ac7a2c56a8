import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { MessageChannel, type MessagePort, Worker } from "node:worker_threads";
import { kustomizationFile } from "../manifests/kustomize/build-kustomization.js";
import type { KustomizeBuilds, TransferredBuild } from "../manifests/kustomize/built-transfer.js";
import { type FileTree, sameBytes } from "../model/file-tree.js";
import type { BuildAnswer, BuildRequest } from "./kustomize-protocol.js";

/** How kustomize builds are bounded beyond the pure engine's own bounds (objects and work). */
export interface KustomizeBuilderOptions {
  /** The longest one build may take before its worker is ended (default 60 s). */
  readonly timeoutMs?: number;
  /** The heap of the build worker, in MiB (default 1024). */
  readonly memoryMb?: number;
  /** The clock of backoffs after a build ran out of time or memory (tests move it). */
  readonly now?: () => number;
}

/** What the builder did since it was made. */
export interface KustomizeStats {
  hits: number;
  builds: number;
}

interface Entry {
  readonly build: TransferredBuild;
  /** What each path it read held (undefined: absent); it stands while the tree holds the same. */
  readonly reads: ReadonlyMap<string, Uint8Array | undefined>;
  readonly maxObjects: number;
  /** For a build that ran out of time or memory: when it may be tried again. */
  readonly retryAt?: number;
  readonly attempts?: number;
}

const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_MEMORY_MB = 1024;
const RETRY_MS = 60_000;
const MAX_RETRY_MS = 30 * 60_000;

/**
 * Builds kustomizations off the event loop: in one worker thread, one at a time, each within a time
 * and a heap bound (past either the worker is ended and the build is an error at its kustomization,
 * tried again only after a backoff), and remembered by what it read, so an unchanged kustomization
 * is never built twice. The worker asks for the files it reads; nothing else of the tree is copied.
 */
export class KustomizeBuilder {
  readonly stats: KustomizeStats = { hits: 0, builds: 0 };
  private readonly cache = new Map<string, Entry>();
  private running: Running | undefined;
  private generation = 0;
  private current: { tree: FileTree; generation: number } | undefined;
  private readonly now: () => number;

  constructor(private readonly options: KustomizeBuilderOptions = {}) {
    this.now = options.now ?? Date.now;
  }

  /** The builds of `dirs` in `tree`, from the cache where what they read is unchanged. */
  async buildAll(dirs: readonly string[], tree: FileTree, maxObjects: number): Promise<KustomizeBuilds> {
    const builds = new Map<string, TransferredBuild>();
    for (const dir of dirs) {
      const known = this.cache.get(dir);
      if (known && this.stands(known, tree, maxObjects)) {
        this.stats.hits++;
        builds.set(dir, known.build);
        continue;
      }
      const entry = await this.build(dir, tree, maxObjects, known);
      this.cache.set(dir, entry);
      builds.set(dir, entry.build);
    }
    for (const dir of this.cache.keys()) if (!dirs.includes(dir)) this.cache.delete(dir);
    return builds;
  }

  /** Ends the worker (a process that is done building). */
  async close(): Promise<void> {
    const running = this.running;
    this.running = undefined;
    await running?.worker.terminate();
  }

  private stands(entry: Entry, tree: FileTree, maxObjects: number): boolean {
    if (entry.maxObjects !== maxObjects) return false;
    if (entry.retryAt !== undefined && this.now() >= entry.retryAt) return false;
    for (const [path, bytes] of entry.reads) if (!sameBytes(tree.get(path), bytes)) return false;
    return true;
  }

  private async build(
    dir: string,
    tree: FileTree,
    maxObjects: number,
    before: Entry | undefined,
  ): Promise<Entry> {
    this.stats.builds++;
    if (this.current?.tree !== tree) this.current = { tree, generation: ++this.generation };
    const { generation } = this.current;
    const running = this.worker();
    const request: BuildRequest = {
      id: ++running.requests,
      generation,
      dir,
      maxObjects,
      ...(running.generation !== generation ? { paths: [...tree.keys()] } : {}),
    };
    running.generation = generation;
    const answer = await running.ask(request, this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    if ("build" in answer) {
      const reads = new Map(answer.build.seen.map((path) => [path, tree.get(path)] as const));
      return { build: answer.build, reads, maxObjects };
    }
    // Out of time or memory: an error at the kustomization, standing until the backoff has passed or
    // a file of the app's directory changes.
    if ("ended" in answer) this.running = undefined;
    const attempts = (before?.attempts ?? 0) + 1;
    const file = kustomizationFile(tree, dir) ?? dir;
    const top = dir.split("/").slice(0, 2).join("/");
    const reads = new Map(
      [...tree.keys()]
        .filter((path) => path.startsWith(`${top}/`))
        .map((path) => [path, tree.get(path)] as const),
    );
    const message = `building ${dir}/ ${answer.failure}; it is tried again later`;
    return {
      build: {
        objects: [],
        problems: [{ file, line: 1, column: 1, path: "", severity: "error", code: "RENDER_FAILED", message }],
        seen: [...reads.keys()].sort(),
      },
      reads,
      maxObjects,
      retryAt: this.now() + Math.min(RETRY_MS * 2 ** (attempts - 1), MAX_RETRY_MS),
      attempts,
    };
  }

  private worker(): Running {
    if (!this.running)
      this.running = new Running(this.options.memoryMb ?? DEFAULT_MEMORY_MB, (path, generation) =>
        this.current?.generation === generation ? this.current.tree.get(path) : undefined,
      );
    return this.running;
  }
}

type Answer = BuildAnswer | { readonly failure: string; readonly ended: true };

/** The build worker and its file port: one build at a time. */
class Running {
  readonly worker: Worker;
  private readonly files: MessagePort;
  requests = 0;
  generation = -1;
  private pending: ((answer: Answer) => void) | undefined;

  constructor(
    private readonly memoryMb: number,
    read: (path: string, generation: number) => Uint8Array | undefined,
  ) {
    const signal = new SharedArrayBuffer(4);
    const flag = new Int32Array(signal);
    const { port1, port2 } = new MessageChannel();
    this.files = port1;
    this.worker = new Worker(workerScript(), {
      workerData: { files: port2, signal },
      transferList: [port2],
      resourceLimits: { maxOldGenerationSizeMb: memoryMb, stackSizeMb: 4 },
    });
    // The worker waits for each file: answer, then raise the flag.
    port1.on("message", (question: { generation: number; path: string }) => {
      port1.postMessage({ bytes: read(question.path, question.generation) });
      Atomics.store(flag, 0, 1);
      Atomics.notify(flag, 0);
    });
    this.worker.on("message", (answer: BuildAnswer) => this.settle(answer));
    this.worker.on("error", (error: Error & { code?: string }) =>
      this.settle({
        failure:
          error.code === "ERR_WORKER_OUT_OF_MEMORY"
            ? `ran out of its memory bound (${this.memoryMb} MiB)`
            : "failed in its worker",
        ended: true,
      }),
    );
    this.worker.on("exit", () => this.settle({ failure: "failed: its worker stopped", ended: true }));
    // Neither keeps a process that is done from exiting (a pending build's timer does).
    port1.unref();
    this.worker.unref();
  }

  ask(request: BuildRequest, timeoutMs: number): Promise<Answer> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.settle({
          failure: `took longer than ${timeoutMs / 1000} s (the operator's bound)`,
          ended: true,
        });
        void this.worker.terminate();
        this.files.close();
      }, timeoutMs);
      this.pending = (answer) => {
        clearTimeout(timer);
        resolve(answer);
      };
      this.worker.postMessage(request);
    });
  }

  private settle(answer: Answer): void {
    const pending = this.pending;
    this.pending = undefined;
    pending?.(answer);
  }
}

// The worker's compiled script: beside this file in dist/, or in dist/ from the TypeScript sources (tests).
function workerScript(): URL {
  const candidates = [
    new URL("./kustomize-worker.js", import.meta.url),
    new URL("../../dist/src/builds/kustomize-worker.js", import.meta.url),
  ];
  return candidates.find((url) => existsSync(fileURLToPath(url))) ?? (candidates[0] as URL);
}
