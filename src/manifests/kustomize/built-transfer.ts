import type { JsonMap } from "../../apimachinery/json.js";
import type { FileTree } from "../../model/file-tree.js";
import type { Problem } from "../../model/problem.js";
import type { FileSyntax, YamlDialect } from "../../model/yaml-source.js";
import type { KustomizeResult } from "./build-kustomization.js";
import type { BuiltObject } from "./built-object.js";

/**
 * A kustomization's build as plain data, so it can be made in one thread (a worker, off the event
 * loop) and read in another: its objects with where each came from (file, document, list item and
 * how the file's YAML is read — the position of a problem is found again from the tree's bytes),
 * its problems, and every path the build looked up (what its cache entry depends on).
 */
export interface TransferredBuild {
  readonly objects: readonly TransferredObject[];
  readonly problems: readonly Problem[];
  /** Every path the build read or looked for, sorted. */
  readonly seen: readonly string[];
}

export interface TransferredObject {
  readonly object: JsonMap;
  readonly file: string;
  readonly index: number;
  readonly item?: number;
  readonly dialect: YamlDialect;
}

/** Kustomize builds by the kustomization directory they built, as loadFleet's fifth input. */
export type KustomizeBuilds = ReadonlyMap<string, TransferredBuild>;

/** A build as plain data. */
export function transferBuild(result: KustomizeResult, seen: readonly string[]): TransferredBuild {
  return {
    objects: result.objects.map(({ object, source }) => ({
      object,
      file: source.file,
      index: source.index,
      ...(source.item !== undefined ? { item: source.item } : {}),
      dialect: source.syntax.dialect,
    })),
    problems: result.problems,
    seen: [...seen].sort(),
  };
}

/** A transferred build read back against the tree it was built from (the same bytes). */
export function receiveBuild(build: TransferredBuild, tree: FileTree): KustomizeResult {
  const syntaxes = new Map<string, FileSyntax>();
  const syntaxOf = (file: string, dialect: YamlDialect) => {
    const key = `${dialect}\0${file}`;
    let syntax = syntaxes.get(key);
    if (!syntax) {
      syntax = { bytes: tree.get(file) ?? new Uint8Array(), dialect };
      syntaxes.set(key, syntax);
    }
    return syntax;
  };
  const objects: BuiltObject[] = build.objects.map((o) => ({
    object: o.object,
    file: o.file,
    source: {
      file: o.file,
      index: o.index,
      value: o.object,
      syntax: syntaxOf(o.file, o.dialect),
      ...(o.item !== undefined ? { item: o.item } : {}),
    },
    previousIds: [],
    prefixes: [],
    suffixes: [],
  }));
  return { objects, problems: build.problems };
}
