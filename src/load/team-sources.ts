import { parse } from "yaml";
import { compareStrings, type FileTree } from "../model/file-tree.js";
import { pathMatcher } from "../model/path-patterns.js";
import type { TeamSource } from "../model/team-types.js";

// Teams whose files come from their own repository (Team spec.source): which repositories at which
// commits a tree pins, and how their files are laid over the fleet repo's tree. Pure: fetching is the
// edge's (git/team-source-fetcher.ts); loadFleet reports what did not fit at the Team's file.

/** One team's pinned repository, as the tree's teams/<name>.yaml asks for it. */
export interface TeamSourcePin {
  readonly team: string;
  /** The Team's file. */
  readonly file: string;
  readonly source: TeamSource;
  /** The team's path patterns: every file its repository brings must match one. */
  readonly paths: readonly string[];
}

/**
 * What fetching a pinned repository gave: its files under the pin's path (relative to it), or why
 * not — `transient` when trying again may succeed (the server, the network, a token not mounted yet).
 */
export type FetchedSource =
  | { readonly files: FileTree }
  | { readonly error: string; readonly transient?: boolean };

/** Why a team's repository (or one of its files) was not laid over the tree. */
export interface SourceIssue {
  readonly team: string;
  readonly file: string;
  /** The field of spec.source the issue is about. */
  readonly field: "url" | "commit" | "path";
  readonly message: string;
}

/** The files the teams' repositories add to the tree, which pins were fetched, and what did not fit. */
export interface TeamSourceMounts {
  readonly files: FileTree;
  /** The pins (sourceKey) fetching answered (files or an error): a Team pinning anything else was not fetched. */
  readonly pins: ReadonlySet<string>;
  readonly issues: readonly SourceIssue[];
  /** The failures trying again may cure (also among the issues): the controller retries rather than record them. */
  readonly unavailable: readonly string[];
}

/** A pin's identity: the same repository at the same commit and path is fetched once. */
export function sourceKey(source: TeamSource): string {
  return `${source.url}#${source.commit}:${source.path ?? ""}`;
}

const COMMIT = /^[0-9a-f]{40}$/;
const URL_PATTERN = /^https?:\/\/[^\s@?#]+$/;
const MAX_TEAM_FILE_BYTES = 256 * 1024;

/**
 * The repositories the tree's Team files pin (spec.source), read leniently: a Team file that does
 * not parse, or whose source does not have the shape the schema asks, pins nothing (loading the
 * tree reports what is wrong with it).
 */
export function teamSourcePins(tree: FileTree): TeamSourcePin[] {
  const pins: TeamSourcePin[] = [];
  for (const [file, bytes] of tree) {
    if (!/^teams\/[^/]+\.ya?ml$/.test(file) || bytes.length > MAX_TEAM_FILE_BYTES) continue;
    const pin = pinOf(file, bytes);
    if (pin) pins.push(pin);
  }
  return pins.sort((a, b) => compareStrings(a.team, b.team));
}

function pinOf(file: string, bytes: Uint8Array): TeamSourcePin | undefined {
  let value: unknown;
  try {
    value = parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes), { maxAliasCount: 0 });
  } catch {
    return undefined;
  }
  const team = record(value);
  const spec = record(team?.spec);
  const source = record(spec?.source);
  const name = record(team?.metadata)?.name;
  const paths = spec?.paths;
  if (!source || team?.kind !== "Team" || typeof name !== "string") return undefined;
  if (!Array.isArray(paths) || !paths.every((p): p is string => typeof p === "string")) return undefined;
  const { url, commit, path } = source;
  if (typeof url !== "string" || !URL_PATTERN.test(url) || typeof commit !== "string" || !COMMIT.test(commit))
    return undefined;
  if (path !== undefined && typeof path !== "string") return undefined;
  return { team: name, file, paths, source: { url, commit, ...(path ? { path } : {}) } };
}

/**
 * The teams' repositories laid over the fleet repo's tree: each fetched file under its relative
 * path, when the team's paths match it and the fleet repo (or another team's repository) holds no
 * file there; everything else is an issue at the Team's source. A path with `.` or `..` segments
 * brings nothing.
 */
export function mountTeamSources(
  tree: FileTree,
  pins: readonly TeamSourcePin[],
  fetched: ReadonlyMap<string, FetchedSource>,
): TeamSourceMounts {
  const files = new Map<string, Uint8Array>();
  const issues: SourceIssue[] = [];
  const unavailable: string[] = [];
  for (const pin of pins) {
    const issue = (field: SourceIssue["field"], message: string) =>
      issues.push({ team: pin.team, file: pin.file, field, message });
    const result = fetched.get(sourceKey(pin.source));
    if (pin.source.path?.split("/").some((segment) => segment === "." || segment === ".."))
      issue("path", `the source's path ${pin.source.path} may not have . or .. segments`);
    else if (result && "error" in result) {
      issue("url", result.error);
      if (result.transient) unavailable.push(`team ${pin.team}: ${result.error}`);
    } else if (result) layOver(pin, result.files, { tree, files, issue });
  }
  const answered = pins.map((pin) => sourceKey(pin.source)).filter((key) => fetched.has(key));
  return { files, pins: new Set(answered), issues, unavailable };
}

// One team's fetched files into `files`: those its paths match, where no other file is.
function layOver(
  pin: TeamSourcePin,
  fetched: FileTree,
  into: {
    readonly tree: FileTree;
    readonly files: Map<string, Uint8Array>;
    readonly issue: (field: SourceIssue["field"], message: string) => void;
  },
): void {
  const owned = pin.paths.map(pathMatcher);
  for (const [path, bytes] of [...fetched].sort(([a], [b]) => compareStrings(a, b))) {
    if (!owned.some((match) => match(path)))
      into.issue(
        "path",
        `${path} in ${pin.source.url} is outside the team's paths (${pin.paths.join(", ")})`,
      );
    else if (into.tree.has(path) || into.files.has(path))
      into.issue("path", `${path} in ${pin.source.url} is a file the fleet repo already holds`);
    else into.files.set(path, bytes);
  }
}

/** The tree with the teams' files laid over it. */
export function withMounts(tree: FileTree, mounts: TeamSourceMounts | undefined): FileTree {
  if (!mounts || mounts.files.size === 0) return tree;
  return new Map([...tree, ...mounts.files]);
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
