import git from "isomorphic-git";
import { parseAllDocuments } from "yaml";
import { isJsonMap, type JsonMap } from "../apimachinery/json.js";
import { type ClusterFacts, clusterFacts, type FleetView, fleetView } from "../observe/fleet-view.js";
import { type TimelineEvent, timelineEvent } from "../observe/timeline.js";
import { APP_LABEL } from "../render/tracking.js";
import { SOURCE_STATUS_PATH, sourceStatusFromText } from "../status/status-files.js";
import type { FleetRepo } from "./fleet-repo.js";
import { gitFs as fs } from "./git-fs.js";
import { readTreeFiles } from "./read-tree.js";
import { diffTrees } from "./tree-diff.js";

/** One object gitfleet renders for a cluster. */
export interface ObjectRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
  /** Its file on the status branch. */
  readonly path: string;
}

/** A status commit: its event and the files it changed. */
export interface CommitView extends TimelineEvent {
  readonly parent?: string;
  readonly author: string;
  readonly files: readonly { readonly path: string; readonly change: "added" | "modified" | "removed" }[];
}

/**
 * Reads what the views show from the fleet repo: the status branch's status/ files (with the Cluster
 * files of the commit it rendered), its history, one commit's changes, an app's rendered objects.
 * Nothing is fetched here — the controller's reconciles (or the caller) keep the branches current —
 * and every answer is kept per status commit, so a view costs one tree read per new status commit.
 */
export class StatusReader {
  private viewCache: { tip: string | undefined; view: Promise<FleetView> } | undefined;
  private objectsCache = new Map<string, Promise<Map<string, ObjectRef[]>>>();
  private objectsTip: string | undefined;

  constructor(
    private readonly repo: FleetRepo,
    private readonly branches: { readonly source: string; readonly status: string },
  ) {}

  /** The status branch's tip, or undefined before the first reconcile. */
  tip(): Promise<string | undefined> {
    return this.repo.branchTip(this.branches.status);
  }

  async view(): Promise<FleetView> {
    const tip = await this.tip();
    const cached = this.viewCache;
    if (cached && cached.tip === tip) return cached.view;
    const view = this.readView(tip);
    this.viewCache = { tip, view };
    view.catch(() => {
      if (this.viewCache?.view === view) this.viewCache = undefined;
    });
    return view;
  }

  /** Status commits newest first, from `before` (default the tip); stops where the local history ends. */
  async history(limit: number, before?: string): Promise<TimelineEvent[]> {
    const events: TimelineEvent[] = [];
    let oid = before ?? (await this.tip());
    while (oid && events.length < limit) {
      const read = await this.readCommit(oid);
      if (!read) break;
      events.push(timelineEvent(oid, isoTime(read.committer.timestamp), read.message));
      oid = read.parent[0];
    }
    return events;
  }

  /** One commit of the status branch (or any commit of the repository) with the files it changed. */
  async commit(oid: string): Promise<CommitView | undefined> {
    const full = await git
      .expandOid({ fs, gitdir: this.repo.gitdir, cache: this.repo.cache, oid })
      .catch(() => undefined);
    const read = full ? await this.readCommit(full) : undefined;
    if (!full || !read) return undefined;
    const parent = read.parent[0];
    const parentTree = parent ? (await this.readCommit(parent))?.tree : undefined;
    const changes = await diffTrees(this.repo.gitdir, this.repo.cache, parentTree, read.tree);
    return {
      ...timelineEvent(full, isoTime(read.committer.timestamp), read.message),
      ...(parent ? { parent } : {}),
      author: `${read.author.name} <${read.author.email}>`,
      files: changes
        .map((c) => ({
          path: c.path,
          change:
            c.oid === null
              ? ("removed" as const)
              : c.previous === null
                ? ("added" as const)
                : ("modified" as const),
        }))
        .sort((a, b) => (a.path < b.path ? -1 : 1)),
    };
  }

  /** The objects gitfleet renders for an app, per cluster (from rendered/ at the status tip). */
  async appObjects(app: string, clusters: readonly string[]): Promise<Record<string, ObjectRef[]>> {
    const tip = await this.tip();
    if (tip !== this.objectsTip) {
      this.objectsTip = tip;
      this.objectsCache = new Map();
    }
    const result: Record<string, ObjectRef[]> = {};
    for (const cluster of clusters) {
      let byApp = this.objectsCache.get(cluster);
      if (!byApp) {
        byApp = tip ? this.renderedObjects(tip, cluster) : Promise.resolve(new Map());
        this.objectsCache.set(cluster, byApp);
      }
      result[cluster] = (await byApp).get(app) ?? [];
    }
    return result;
  }

  /** One rendered object at the status tip, parsed; undefined when there is none. */
  async renderedObject(path: string): Promise<JsonMap | undefined> {
    const tip = await this.tip();
    if (!tip || !path.startsWith("rendered/")) return undefined;
    const files = await readTreeFiles(this.repo.gitdir, this.repo.cache, await this.repo.treeOf(tip), (p) =>
      p.endsWith("/") ? path.startsWith(p) : p === path,
    );
    const bytes = files.get(path);
    if (!bytes) return undefined;
    const value = parseAllDocuments(new TextDecoder().decode(bytes))[0]?.toJS() as unknown;
    return isJsonMap(value) ? value : undefined;
  }

  private async readView(tip: string | undefined): Promise<FleetView> {
    if (!tip) return fleetView(new Map(), await this.clusterFacts(undefined));
    const tree = await this.repo.treeOf(tip);
    const files = await readTreeFiles(this.repo.gitdir, this.repo.cache, tree, under("status/"));
    const texts = new Map([...files].map(([path, bytes]) => [path, new TextDecoder().decode(bytes)]));
    const source = texts.get(SOURCE_STATUS_PATH);
    const rendered = source === undefined ? undefined : sourceStatusFromText(source).renderedCommit;
    return fleetView(texts, await this.clusterFacts(rendered), tip);
  }

  // The Cluster files of the commit rendered/ comes from (a shallow cache may lack it: then the source tip's).
  private async clusterFacts(rendered: string | undefined): Promise<ClusterFacts[]> {
    const commit = (rendered && (await this.readCommit(rendered))) || undefined;
    const tip = commit ? undefined : await this.repo.branchTip(this.branches.source);
    const tree = commit?.tree ?? (tip ? (await this.readCommit(tip))?.tree : undefined);
    if (!tree) return [];
    const files = await readTreeFiles(this.repo.gitdir, this.repo.cache, tree, under("clusters/"));
    return [...files]
      .filter(([path]) => /\.ya?ml$/.test(path))
      .flatMap(([, bytes]) => parseAllDocuments(new TextDecoder().decode(bytes), { version: "1.1" }))
      .filter((document) => !("errors" in document && document.errors.length > 0))
      .flatMap((document) => clusterFacts(document.toJS()) ?? []);
  }

  private async renderedObjects(tip: string, cluster: string): Promise<Map<string, ObjectRef[]>> {
    const prefix = `rendered/${cluster}/`;
    const files = await readTreeFiles(
      this.repo.gitdir,
      this.repo.cache,
      await this.repo.treeOf(tip),
      under(prefix),
    );
    const byApp = new Map<string, ObjectRef[]>();
    for (const [path, bytes] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const text = new TextDecoder().decode(bytes);
      const object = parseAllDocuments(text)[0]?.toJS() as
        | {
            apiVersion?: string;
            kind?: string;
            metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
          }
        | undefined;
      const app = object?.metadata?.labels?.[APP_LABEL];
      if (!object || !app) continue;
      const list = byApp.get(app) ?? [];
      list.push({
        apiVersion: String(object.apiVersion ?? ""),
        kind: String(object.kind ?? ""),
        ...(object.metadata?.namespace ? { namespace: object.metadata.namespace } : {}),
        name: String(object.metadata?.name ?? ""),
        path,
      });
      byApp.set(app, list);
    }
    return byApp;
  }

  private async readCommit(oid: string) {
    return git
      .readCommit({ fs, gitdir: this.repo.gitdir, cache: this.repo.cache, oid })
      .then((read) => read.commit)
      .catch(() => undefined);
  }
}

// A `wanted` for readTreeFiles: the files under a directory, and the directories leading to it.
function under(prefix: string): (path: string) => boolean {
  return (path) =>
    path.endsWith("/") ? prefix.startsWith(path) || path.startsWith(prefix) : path.startsWith(prefix);
}

function isoTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}
