import { compareStrings, type FileTree, sameBytes, sortedPaths } from "../model/file-tree.js";
import type { Problem } from "../model/problem.js";
import type { Reporter } from "../model/reporter.js";
import { type RememberedEntry, rememberAgain, rememberedFor } from "../model/rules/remembered-findings.js";
import {
  type FileSyntax,
  type ParsedFile,
  parseSourceFile,
  type SourceDocument,
  type YamlDialect,
} from "../model/yaml-source.js";

/** What one read of a document gave: its value and the problems it reported. */
interface Read {
  readonly value: unknown;
  readonly problems: readonly Problem[];
}

/** One file as a load last parsed it, and what was read from its documents. */
interface CachedFile {
  readonly bytes: Uint8Array;
  readonly parsed: ParsedFile;
  /** Per document and reading (kind of read and its parameters). */
  readonly reads: Map<string, Read>;
}

/**
 * Parsed files from earlier loads, by path, and what was read from each of their documents: a
 * long-running controller passes the same cache to every load so that only files whose bytes changed
 * are parsed and read again (that is most of a load's cost). A memo, not state: a load with a cache
 * gives exactly what a load without one gives. Keyed by content (a file's bytes are compared), so a
 * cache from any earlier tree — even one kept on disk across a restart — is safe to use.
 */
export interface ParseCache {
  readonly files: Map<string, CachedFile>;
  /** The last load's paths in order: the next load's, when the tree holds the same paths (most loads). */
  paths?: readonly string[];
}

/** An empty cache for loadFleet. */
export function createParseCache(): ParseCache {
  return { files: new Map() };
}

/** The tree's paths in order; sorted again only when a path came or went. */
export function orderedPaths(tree: FileTree, cache: ParseCache | undefined): readonly string[] {
  const last = cache?.paths;
  if (last && last.length === tree.size && last.every((path) => tree.has(path))) return last;
  const paths = sortedPaths(tree);
  if (cache) cache.paths = paths;
  return paths;
}

/** Forgets the files the tree no longer holds. */
export function forgetRemoved(cache: ParseCache, tree: FileTree): void {
  for (const path of cache.files.keys()) if (!tree.has(path)) cache.files.delete(path);
}

/** The file parsed, from the cache when its bytes are the same (`fresh`: parsed now). */
export function parseCached(
  path: string,
  bytes: Uint8Array,
  cache: ParseCache | undefined,
): { readonly file: ParsedFile; readonly fresh: boolean } {
  const hit = cache?.files.get(path);
  if (hit && sameBytes(hit.bytes, bytes)) return { file: hit.parsed, fresh: false };
  const parsed = parseSourceFile(path, bytes);
  cache?.files.set(path, { bytes, parsed, reads: new Map() });
  return { file: parsed, fresh: true };
}

/**
 * A read of one document that depends on nothing but the document and `key`: done once per cached
 * document, its problems replayed on later loads. Kept with the document's file, so a file that
 * changed forgets every read of it.
 */
export function memoRead<T>(
  cache: ParseCache | undefined,
  source: SourceDocument,
  key: string,
  reporter: Reporter,
  read: () => T,
): T {
  const reads = cache?.files.get(source.file)?.reads;
  if (!reads) return read();
  const at = `${source.index}\0${source.item ?? ""}\0${key}`;
  const hit = reads.get(at);
  if (hit) {
    reporter.problems.push(...hit.problems);
    return hit.value as T;
  }
  const before = reporter.problems.length;
  const value = read();
  reads.set(at, { value, problems: reporter.problems.slice(before) });
  return value;
}

/**
 * A cached file as plain data (no class, no weak reference): what a snapshot keeps. The documents'
 * syntax is not kept: it is parsed again from the bytes when a problem needs a position.
 */
export interface CachedFileRecord {
  readonly path: string;
  readonly bytes: Uint8Array;
  readonly dialect: YamlDialect;
  readonly documents: readonly { readonly index: number; readonly value: unknown }[];
  readonly problems: readonly Problem[];
  readonly reads: readonly (readonly [string, Read])[];
  /** Per read whose value is an object: the per-object checks' findings for it (remembered-findings.ts). */
  readonly remembered: readonly (readonly [string, readonly RememberedEntry[]])[];
}

/** The cache as plain data, by path. */
export function parseCacheRecords(cache: ParseCache): CachedFileRecord[] {
  return [...cache.files]
    .map(([path, { bytes, parsed, reads }]) => ({
      path,
      bytes,
      dialect: parsed.documents[0]?.syntax.dialect ?? "kubectl",
      documents: parsed.documents.map(({ index, value }) => ({ index, value })),
      problems: parsed.problems,
      reads: [...reads],
      remembered: [...reads].flatMap(([at, { value }]) => {
        const entries = typeof value === "object" && value !== null ? rememberedFor(value) : [];
        return entries.length > 0 ? [[at, entries] as const] : [];
      }),
    }))
    .sort((a, b) => compareStrings(a.path, b.path));
}

/** A cache made again from its records: the same files, documents and reads. */
export function parseCacheFrom(records: readonly CachedFileRecord[]): ParseCache {
  const files = new Map<string, CachedFile>();
  for (const { path, bytes, dialect, documents, problems, reads, remembered } of records) {
    const syntax: FileSyntax = { bytes, dialect };
    const parsed: ParsedFile = {
      documents: documents.map(({ index, value }) => ({ file: path, index, value, syntax })),
      problems: [...problems],
    };
    const kept = new Map(reads);
    for (const [at, entries] of remembered) {
      const value = kept.get(at)?.value;
      if (typeof value === "object" && value !== null) rememberAgain(value, entries);
    }
    files.set(path, { bytes, parsed, reads: kept });
  }
  return { files };
}
