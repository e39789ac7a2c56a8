import { MultiBar, type SingleBar } from "cli-progress";
import type { Logger } from "pino";

/** One long operation's progress: how many of how many, and what it is at. */
export interface TaskProgress {
  update(done: number, detail?: string): void;
  finish(detail?: string): void;
}

/** Progress of a command's long operations (demo start-up, a large reconcile, syncing many objects). */
export interface Progress {
  task(name: string, total: number): TaskProgress;
  /** Ends every bar (a terminal gets its cursor back). */
  stop(): void;
}

/** Where progress goes: a terminal stream gets bars; anything else gets log records. */
export interface ProgressTarget {
  readonly stream: NodeJS.WritableStream & { readonly isTTY?: boolean };
  readonly logger: Logger;
}

/** Bars on a terminal; `log` prints a line above them, so log records do not break the bars. */
export interface TerminalProgress extends Progress {
  log(line: string): void;
}

/**
 * Bars on a terminal (cli-progress, redrawn in place, at most ten times a second); on anything else
 * — a pipe, a file, a CI log — plain structured records: one when a task starts, one at each quarter,
 * one when it finishes, so a log of a large reconcile says how far it got without a line per object.
 */
export function progressFor(target: ProgressTarget): Progress {
  return target.stream.isTTY ? terminalProgress(target.stream) : loggedProgress(target.logger);
}

/**
 * A command's logger and progress together: on a terminal the log records go above the bars (the
 * logger writes through them); elsewhere progress is log records.
 */
export function loggerWithProgress(
  stream: NodeJS.WritableStream & { readonly isTTY?: boolean },
  makeLogger: (destination?: { write(line: string): void }) => Logger,
): { logger: Logger; progress: Progress } {
  if (!stream.isTTY) {
    const logger = makeLogger();
    return { logger, progress: loggedProgress(logger) };
  }
  const progress = terminalProgress(stream);
  return { logger: makeLogger({ write: (line) => progress.log(line) }), progress };
}

export function terminalProgress(stream: NodeJS.WritableStream): TerminalProgress {
  const bars = new MultiBar({
    stream: stream as NodeJS.WriteStream,
    format: " {task} [{bar}] {value}/{total} {detail}",
    barsize: 24,
    hideCursor: true,
    clearOnComplete: false,
    stopOnComplete: false,
    fps: 10,
    autopadding: true,
  });
  return {
    task(name, total) {
      const bar: SingleBar = bars.create(Math.max(total, 1), 0, { task: name, detail: "" });
      return {
        update: (done, detail = "") => bar.update(done, { detail }),
        finish: (detail = "done") => bar.update(Math.max(total, 1), { detail }),
      };
    },
    stop: () => {
      // Lines logged since the last redraw are printed by the next one: draw once more first.
      bars.update();
      bars.stop();
    },
    log: (line) => bars.log(line.endsWith("\n") ? line : `${line}\n`),
  };
}

function loggedProgress(logger: Logger): Progress {
  return {
    task(name, total) {
      logger.info({ task: name, done: 0, total }, `${name}: started`);
      let quarter = 0;
      return {
        update(done, detail) {
          const reached = total > 0 ? Math.floor((4 * done) / total) : 0;
          if (reached <= quarter || reached >= 4) return;
          quarter = reached;
          logger.info(
            { task: name, done, total, ...(detail ? { detail } : {}) },
            `${name}: ${done}/${total}`,
          );
        },
        finish(detail) {
          logger.info({ task: name, done: total, total, ...(detail ? { detail } : {}) }, `${name}: done`);
        },
      };
    },
    stop: () => {},
  };
}

/** The stages of one reconcile, in order (the reconciler's stopwatch laps). */
export const RECONCILE_STAGES = ["fetch", "restore", "read", "reconcile", "write", "publish"] as const;

/** The first reconcile's stages as one task: each finished stage moves the bar (later reconciles are not shown). */
export function reconcileProgress(progress: Progress): (stage: string) => void {
  let task: TaskProgress | undefined;
  const seen = new Set<string>();
  let finished = false;
  return (stage) => {
    if (finished) return;
    task ??= progress.task("reconcile", RECONCILE_STAGES.length);
    seen.add(stage);
    finished = seen.size >= RECONCILE_STAGES.length;
    if (finished) task.finish(stage);
    else task.update(seen.size, stage);
  };
}

/** Each cluster's first sync as a task of its own, created when its first object is done. */
export function syncProgress(progress: Progress): (cluster: string, done: number, total: number) => void {
  const tasks = new Map<string, TaskProgress | "finished">();
  return (cluster, done, total) => {
    let task = tasks.get(cluster);
    if (task === "finished") return;
    if (!task) {
      task = progress.task(`sync ${cluster}`, total);
      tasks.set(cluster, task);
    }
    if (done < total) return task.update(done, "objects");
    task.finish(`${total} objects`);
    tasks.set(cluster, "finished");
  };
}
