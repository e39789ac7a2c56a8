/**
 * What the simulated containers write, per pod and container: the current run's lines and, after a
 * restart, the previous run's (`kubectl logs --previous`). Bounded: the last MAX_LINES lines of each
 * run are kept, as a node keeps a container's log files rotated. Followers get each line as it is
 * written and hear when the run ends.
 */

const MAX_LINES = 1000;

export interface LogLine {
  /** When the line was written. */
  readonly at: Date;
  readonly text: string;
}

/** What `pods/log` asks for. */
export interface LogQuery {
  readonly previous?: boolean;
  readonly tailLines?: number;
  readonly sinceSeconds?: number;
  /** RFC 3339 (sinceTime). */
  readonly sinceTime?: Date;
  readonly timestamps?: boolean;
  readonly limitBytes?: number;
}

interface Run {
  lines: LogLine[];
  ended: boolean;
  followers: Set<Follower>;
}

interface Follower {
  readonly line: (text: string) => void;
  readonly end: () => void;
  readonly timestamps: boolean;
}

export class ContainerLogs {
  private readonly runs = new Map<string, { current: Run; previous?: Run }>();

  /** Appends a line to a container's current run. */
  write(pod: string, container: string, text: string, at: Date): void {
    const run = this.entry(pod, container).current;
    const line = { at, text };
    run.lines.push(line);
    if (run.lines.length > MAX_LINES) run.lines.splice(0, run.lines.length - MAX_LINES);
    for (const follower of run.followers) follower.line(formatLine(line, follower.timestamps));
  }

  /** The container's run ended (it exited, or its pod is gone): followers are done. */
  end(pod: string, container: string): void {
    const run = this.runs.get(key(pod, container))?.current;
    if (!run || run.ended) return;
    run.ended = true;
    for (const follower of run.followers) follower.end();
    run.followers.clear();
  }

  /** The container starts again: the current run becomes the previous one. */
  restart(pod: string, container: string): void {
    const entry = this.entry(pod, container);
    this.end(pod, container);
    entry.previous = entry.current;
    entry.current = newRun();
  }

  /** Forgets a pod that is gone (its followers end). */
  forget(pod: string, containers: readonly string[]): void {
    for (const container of containers) {
      this.end(pod, container);
      this.runs.delete(key(pod, container));
    }
  }

  /** Whether the container ran before its current run. */
  hasPrevious(pod: string, container: string): boolean {
    return this.runs.get(key(pod, container))?.previous !== undefined;
  }

  /** The text a log request gets: the lines it selects, newline-terminated. */
  read(pod: string, container: string, query: LogQuery, now: Date): string {
    const entry = this.runs.get(key(pod, container));
    const run = query.previous ? entry?.previous : entry?.current;
    const since =
      query.sinceTime?.getTime() ??
      (query.sinceSeconds !== undefined ? now.getTime() - query.sinceSeconds * 1000 : undefined);
    let lines = (run?.lines ?? []).filter((line) => since === undefined || line.at.getTime() >= since);
    if (query.tailLines !== undefined) lines = query.tailLines <= 0 ? [] : lines.slice(-query.tailLines);
    const text = lines.map((line) => formatLine(line, query.timestamps === true)).join("");
    return query.limitBytes !== undefined
      ? Buffer.from(text).subarray(0, query.limitBytes).toString("utf8")
      : text;
  }

  /** Follows the current run: each new line, then the end (at once when it has ended). Returns the stop. */
  follow(pod: string, container: string, follower: Follower): () => void {
    const run = this.entry(pod, container).current;
    if (run.ended) {
      follower.end();
      return () => undefined;
    }
    run.followers.add(follower);
    return () => run.followers.delete(follower);
  }

  private entry(pod: string, container: string): { current: Run; previous?: Run } {
    const k = key(pod, container);
    let entry = this.runs.get(k);
    if (!entry) {
      entry = { current: newRun() };
      this.runs.set(k, entry);
    }
    return entry;
  }
}

function newRun(): Run {
  return { lines: [], ended: false, followers: new Set() };
}

function key(pod: string, container: string): string {
  return `${pod}\0${container}`;
}

// A line as the kubelet serves it; with timestamps, RFC 3339 with nanoseconds first.
function formatLine(line: LogLine, timestamps: boolean): string {
  const stamp = timestamps ? `${line.at.toISOString().replace(/\.(\d{3})Z$/, ".$1000000Z")} ` : "";
  return `${stamp}${line.text}\n`;
}
