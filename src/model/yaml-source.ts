import {
  type Document,
  isMap,
  isNode,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  parseAllDocuments,
  type ScalarTag,
  type Tags,
  visit,
} from "yaml";
import type { Problem, SourceLocation } from "./problem.js";
import { toJsonPointer } from "./problem.js";
import { byteOffsetToLinePos, findInvalidUtf8 } from "./utf8.js";

/** One YAML document of a fleet repo file, with what is needed to point at any node in it. */
export interface SourceDocument {
  readonly file: string;
  /** 0-based position of the document in its file. */
  readonly index: number;
  /** The document as plain JSON-like data. */
  readonly value: unknown;
  /** Where the document's nodes sit in its file (see FileSyntax). */
  readonly syntax: FileSyntax;
  /** For an object inside a List document: its position in the List's `items` (paths are relative to it). */
  readonly item?: number;
}

/** A file's YAML syntax tree: its documents' nodes with their offsets, and the file's line starts. */
interface ParsedSyntax {
  readonly documents: readonly Document.Parsed[];
  readonly lineCounter: LineCounter;
}

/**
 * The positions of a file's nodes, for pointing a problem at a line and column: the file's bytes and
 * how its plain scalars are typed. The syntax tree costs about ten times the file's plain data and is
 * needed only when a problem is reported, so it is not kept from the first parse: `syntaxTree` parses
 * it again from the bytes (which the fleet's tree keeps anyway) when a position is first asked for,
 * and holds it weakly after that. A fleet of 50,000 apps would otherwise hold gigabytes of it through
 * a reconcile (a WeakRef made during a synchronous load keeps its target until the load ends) and
 * between reconciles. Plain data, so that a document can be copied (to a worker, into a snapshot).
 */
export interface FileSyntax {
  readonly bytes: Uint8Array;
  /** How the file's plain scalars are typed (a document rebuilt elsewhere is read the same way). */
  readonly dialect: YamlDialect;
}

const heldTrees = new WeakMap<FileSyntax, WeakRef<ParsedSyntax>>();

/** The syntax tree, parsed again unless it is still held. */
export function syntaxTree(syntax: FileSyntax): ParsedSyntax {
  const held = heldTrees.get(syntax)?.deref();
  if (held) return held;
  const parsed = parseSyntax(new TextDecoder("utf-8").decode(syntax.bytes), syntax.dialect);
  heldTrees.set(syntax, new WeakRef(parsed));
  return parsed;
}

/** The documents of one file, and what kept other documents from parsing. */
export interface ParsedFile {
  readonly documents: SourceDocument[];
  readonly problems: Problem[];
}

// Kubernetes reads YAML 1.1 (yes/no/on/off are booleans, 0755 is octal) but keeps timestamps and
// sexagesimal numbers as strings; match that so a manifest means here what it means to kubectl.
const kubernetesTags = (tags: Tags): Tags =>
  tags
    .filter((tag) =>
      typeof tag === "string"
        ? !["timestamp", "intTime", "floatTime"].includes(tag)
        : tag.tag !== "tag:yaml.org,2002:timestamp" && tag.format !== "TIME",
    )
    .map(goYamlFloat);

// go-yaml's YAML 1.1 floats need a digit: "e0" and "." are strings to kubectl, while the yaml
// package reads them as NaN. Its two decimal float tags get go-yaml's patterns.
// go-yaml drops underscores before it matches, so "._" (a point and no digit) is a string too.
const FLOAT_EXP = /^[-+]?(?:\.[0-9_]*[0-9][0-9_]*|[0-9][0-9_]*(?:\.[0-9_]*)?)[eE][-+]?[0-9]+$/;
const FLOAT_PLAIN = /^[-+]?(?:\.[0-9_]*[0-9][0-9_]*|[0-9][0-9_]*\.[0-9_]*)$/;

function goYamlFloat(tag: Tags[number]): Tags[number] {
  if (typeof tag === "string" || tag.tag !== "tag:yaml.org,2002:float" || !(tag.test instanceof RegExp))
    return tag;
  // Only scalar tags carry a test pattern, so this is a ScalarTag.
  const scalar = tag as ScalarTag;
  if (scalar.format === "EXP") return { ...scalar, test: FLOAT_EXP };
  return tag.test.test("1.5") ? { ...scalar, test: FLOAT_PLAIN } : tag;
}

// Aliases can expand exponentially ("billion laughs"); bound them.
const MAX_ALIAS_COUNT = 1000;

/**
 * The largest file the fleet repo may hold, and the largest document once its aliases are expanded.
 * The API server takes requests of at most 3 MiB (and etcd objects of 1.5 MiB), so nothing larger
 * can ever be applied; past these bounds a file is refused before it costs memory or time.
 */
export const MAX_FILE_BYTES = 8 * 2 ** 20;
export const MAX_DOCUMENT_BYTES = 3 * 2 ** 20;

const TOO_LARGE_DOCUMENT = `the document is larger than ${MAX_DOCUMENT_BYTES / 2 ** 20} MiB once its aliases are expanded; the API server takes no object that large`;

/**
 * How a file's plain scalars are typed: "kubectl" reads YAML 1.1 as `kubectl apply` does (`yes` is
 * true); "kustomize" reads YAML 1.2 as kustomize's go-yaml v3 does (`yes` is a string).
 */
export type YamlDialect = "kubectl" | "kustomize";

/** The file's NOT_UTF8 problem, at its first byte that is not UTF-8; undefined when it is UTF-8 text. */
export function encodingProblem(file: string, bytes: Uint8Array): Problem | undefined {
  const invalid = findInvalidUtf8(bytes);
  if (invalid < 0) return undefined;
  const pos = byteOffsetToLinePos(bytes, invalid);
  const message = `file is not valid UTF-8 (byte 0x${(bytes[invalid] ?? 0).toString(16).padStart(2, "0")}); save it as UTF-8 text`;
  return { file, ...pos, path: "", severity: "error", code: "NOT_UTF8", message };
}

/** Parses a file into its non-empty documents; syntax errors become problems, never exceptions. */
export function parseSourceFile(
  file: string,
  bytes: Uint8Array,
  dialect: YamlDialect = "kubectl",
): ParsedFile {
  if (bytes.length > MAX_FILE_BYTES) {
    const message = `the file is ${(bytes.length / 2 ** 20).toFixed(1)} MiB; files of the fleet repo may hold at most ${MAX_FILE_BYTES / 2 ** 20} MiB (split it)`;
    return {
      documents: [],
      problems: [{ file, line: 1, column: 1, path: "", severity: "error", code: "TOO_LARGE", message }],
    };
  }
  const notUtf8 = encodingProblem(file, bytes);
  if (notUtf8) return { documents: [], problems: [notUtf8] };
  const parsed = parseSyntax(new TextDecoder("utf-8").decode(bytes), dialect);
  const { lineCounter } = parsed;
  const syntax: FileSyntax = { bytes, dialect };
  const documents: SourceDocument[] = [];
  const problems: Problem[] = [];
  parsed.documents.forEach((document, index) => {
    const report: ReportAt = (offset, message, severity = "error", code = "YAML_SYNTAX") =>
      problems.push({ ...yamlProblem(file, lineCounter, offset, message, code), severity });
    const value = readDocumentValue(document, report);
    if (value !== undefined) documents.push({ file, index, value, syntax });
  });
  return { documents, problems };
}

function parseSyntax(text: string, dialect: YamlDialect): ParsedSyntax {
  const lineCounter = new LineCounter();
  const documents = parseAllDocuments(text, {
    lineCounter,
    ...(dialect === "kubectl"
      ? { version: "1.1" as const, customTags: kubernetesTags }
      : { version: "1.2" as const }),
    merge: true,
    uniqueKeys: true,
    prettyErrors: false,
    // Warnings become problems when the file is read; the yaml package must not print to stderr on its own.
    logLevel: "silent",
  });
  return { documents, lineCounter };
}

type ReportAt = (
  offset: number,
  message: string,
  severity?: Problem["severity"],
  code?: Problem["code"],
) => void;

/** A document's plain value, or undefined when it is empty or cannot be a Kubernetes object. */
function readDocumentValue(document: Document.Parsed, report: ReportAt): unknown {
  for (const error of document.errors) report(error.pos[0], error.message);
  if (document.errors.length > 0) return undefined;
  for (const warning of document.warnings) report(warning.pos[0], warning.message, "warning");
  if (document.contents === null) return undefined;
  const start = document.contents.range[0];
  const badKey = findBadKey(document);
  if (badKey !== undefined) {
    report(badKey.offset, badKey.message, "error", badKey.code);
    return undefined;
  }
  const value = toPlainValue(document);
  if (value instanceof Error) {
    report(start, value.message);
    return undefined;
  }
  const expanded = expandedSize(value, MAX_DOCUMENT_BYTES);
  if (expanded === "cycle") {
    report(start, "an alias refers to one of its own ancestors; Kubernetes objects cannot contain cycles");
    return undefined;
  }
  if (expanded === "too-large") {
    report(start, TOO_LARGE_DOCUMENT, "error", "TOO_LARGE");
    return undefined;
  }
  // A document holding only null ("---" followed by nothing, or a lone "~") is empty, as for kubectl.
  return value === null ? undefined : value;
}

// The first mapping key no Kubernetes object may have: a collection or alias (JSON cannot represent
// it), or "__proto__", which JavaScript reads as an object's prototype rather than as a field.
function findBadKey(
  document: Document.Parsed,
): { offset: number; message: string; code: Problem["code"] } | undefined {
  let found: { offset: number; message: string; code: Problem["code"] } | undefined;
  visit(document, {
    Pair(_, pair) {
      const offset = isNode(pair.key) ? (pair.key.range?.[0] ?? 0) : 0;
      if (isScalar(pair.key) && pair.key.value === "__proto__")
        found = { offset, code: "FORBIDDEN_KEY", message: FORBIDDEN_PROTO };
      else if (!isScalar(pair.key) && pair.key !== null)
        found = {
          offset,
          code: "YAML_SYNTAX",
          message: "mapping keys must be plain strings (Kubernetes objects are JSON)",
        };
      return found ? visit.BREAK : undefined;
    },
  });
  return found;
}

const FORBIDDEN_PROTO =
  'the key "__proto__" is not allowed: JavaScript reads it as an object\'s prototype, not as a field; remove or rename it';

/**
 * The size of a document as it will be written out — every alias expanded, as the renderer and the
 * API server see it — counted in characters of keys and scalars: "cycle" when it contains itself (a
 * self-referencing alias such as `&a [*a]`), "too-large" as soon as it passes `limit`. The walk stops
 * there, so an alias bomb costs `limit` steps, never its expansion.
 */
export function expandedSize(value: unknown, limit: number): number | "cycle" | "too-large" {
  const measure = new ExpandedSize(limit);
  return measure.walk(value) ?? measure.size;
}

class ExpandedSize {
  size = 0;
  private readonly ancestors = new Set<object>();

  constructor(private readonly limit: number) {}

  walk(node: unknown): "cycle" | "too-large" | undefined {
    if (typeof node !== "object" || node === null) {
      this.size += typeof node === "string" ? node.length + 2 : 8;
      return this.size > this.limit ? "too-large" : undefined;
    }
    if (this.ancestors.has(node)) return "cycle";
    this.ancestors.add(node);
    const found = this.children(node);
    this.ancestors.delete(node);
    return found;
  }

  private children(node: object): "cycle" | "too-large" | undefined {
    for (const [key, child] of Object.entries(node)) {
      this.size += key.length + 2;
      const found = this.walk(child);
      if (found) return found;
    }
    return this.size > this.limit ? "too-large" : undefined;
  }
}

function toPlainValue(document: Document.Parsed): unknown {
  try {
    return document.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    // The yaml package throws (rather than reports) on alias bombs and bad merge keys.
    return error instanceof Error ? error : new Error(String(error));
  }
}

function yamlProblem(
  file: string,
  lineCounter: LineCounter,
  offset: number,
  message: string,
  code: Problem["code"] = "YAML_SYNTAX",
): Problem {
  const { line, col } = lineCounter.linePos(offset);
  const text = message.replace(/ at line \d+, column \d+.*$/s, "");
  return {
    file,
    line,
    column: col,
    path: "",
    severity: "error",
    code,
    message: code === "YAML_SYNTAX" ? `YAML: ${text}` : text,
  };
}

/** Which part of a mapping entry a location should point at. */
export type LocateTarget = "value" | "key";

/**
 * Finds the source position of the node at `segments` in a document. Walks as deep as the document
 * goes: a path that does not exist resolves to its deepest existing ancestor, so a "missing field"
 * points at the mapping it is missing from.
 */
export function locate(
  source: SourceDocument,
  segments: readonly (string | number)[],
  target: LocateTarget = "value",
): SourceLocation {
  const { documents, lineCounter } = syntaxTree(source.syntax);
  let node: unknown = documents[source.index]?.contents;
  let keyNode: unknown;
  const path = source.item === undefined ? segments : ["items", source.item, ...segments];
  for (const segment of path) {
    const next = childOf(node, segment);
    if (next === undefined) break;
    node = next.value ?? next.key;
    keyNode = next.key;
  }
  const chosen = target === "key" && keyNode !== undefined ? keyNode : node;
  const offset = isNode(chosen) && chosen.range ? chosen.range[0] : 0;
  const { line, col } = lineCounter.linePos(offset);
  return { file: source.file, line, column: col, path: toJsonPointer(path) };
}

function childOf(node: unknown, segment: string | number): { key?: Node; value?: Node } | undefined {
  if (isMap(node)) {
    const pair = node.items.find(
      (item) => isPair(item) && isScalar(item.key) && String(item.key.value) === String(segment),
    );
    if (!pair) return undefined;
    return {
      ...(isNode(pair.key) ? { key: pair.key } : {}),
      ...(isNode(pair.value) ? { value: pair.value } : {}),
    };
  }
  if (isSeq(node)) {
    const item = node.items[Number(segment)];
    return isNode(item) ? { value: item } : undefined;
  }
  return undefined;
}
