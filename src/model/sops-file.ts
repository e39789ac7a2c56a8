import { isMap, isScalar, isSeq, type Node, parseAllDocuments } from "yaml";

/**
 * A value as sops writes it once encrypted: AES-256-GCM ciphertext, its nonce and tag (base64), and
 * the type of the plaintext. sops binds each value to its place: the key path, joined by ":", with a
 * trailing ":", is the cipher's additional data.
 */
export interface SopsCiphertext {
  readonly data: string;
  readonly iv: string;
  readonly tag: string;
  readonly type: SopsValueType;
}

export type SopsValueType = "str" | "int" | "float" | "bool" | "bytes" | "time" | "comment";

const VALUE_TYPES: readonly string[] = ["str", "int", "float", "bool", "bytes", "time", "comment"];
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
// sops's own pattern: ENC[AES256_GCM,data:…,iv:…,tag:…,type:…] (no part may hold a comma).
const ENC = /^ENC\[AES256_GCM,data:([^,]*),iv:([^,]+),tag:([^,]+),type:([^,\]]+)\]$/;

/** True when a value has the form of an encrypted sops value (whether or not it is well formed). */
export function looksEncrypted(value: unknown): value is string {
  return typeof value === "string" && value.startsWith("ENC[");
}

/** Reads an encrypted value, or says why it is not one sops could have written. */
export function parseSopsCiphertext(value: string): SopsCiphertext | { readonly error: string } {
  const match = ENC.exec(value);
  if (!match)
    return {
      error: "is not an encrypted value as sops writes it (ENC[AES256_GCM,data:…,iv:…,tag:…,type:…])",
    };
  const [, data = "", iv = "", tag = "", type = ""] = match;
  for (const [name, part] of [
    ["data", data],
    ["iv", iv],
    ["tag", tag],
  ] as const)
    if (!BASE64.test(part)) return { error: `holds a ${name} that is not base64` };
  if (base64Length(tag) !== 16) return { error: "holds a tag that is not 16 bytes (AES-GCM's)" };
  if (base64Length(iv) === 0) return { error: "holds an empty iv" };
  if (!VALUE_TYPES.includes(type)) return { error: `holds an unknown type ${JSON.stringify(type)}` };
  return { data, iv, tag, type: type as SopsValueType };
}

function base64Length(text: string): number {
  return (text.length / 4) * 3 - (text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0);
}

/**
 * One scalar of a sops file in the order sops walks it: its key path (list positions are not part
 * of it, as sops leaves them out), and its text as sops hashes it into the file's MAC (numbers as Go
 * formats them, booleans True/False). Nulls are not walked.
 */
export interface SopsLeaf {
  /** The 0-based document of the file. */
  readonly document: number;
  readonly path: readonly string[];
  readonly text: string;
  /** The value has the encrypted form: the text is its ciphertext. */
  readonly encrypted: boolean;
}

/**
 * Every leaf of a sops-encrypted YAML file, in the order sops walks it (document order, keys as
 * written), leaving out each document's top-level `sops` block. The file is read as YAML 1.2, as
 * sops's go-yaml v3 reads it, so a leaf's text is what sops hashed. Undefined when the file holds
 * what sops never writes (an alias, a key that is not a scalar).
 */
export function sopsLeaves(bytes: Uint8Array): SopsLeaf[] | { readonly error: string } {
  const text = new TextDecoder("utf-8").decode(bytes);
  const documents = parseAllDocuments(text, { version: "1.2", uniqueKeys: true, logLevel: "silent" });
  const leaves: SopsLeaf[] = [];
  let index = 0;
  for (const document of documents) {
    if (document.errors.length > 0) return { error: "the file is not valid YAML" };
    if (document.contents === null) continue;
    const walked = walk(document.contents, [], index, leaves, true);
    if (walked !== undefined) return { error: walked };
    index++;
  }
  return leaves;
}

// Appends a node's leaves; returns why the node cannot be walked, if it cannot.
function walk(
  node: Node,
  path: string[],
  document: number,
  out: SopsLeaf[],
  top = false,
): string | undefined {
  if (isMap(node)) return walkMap(node.items, path, document, out, top);
  if (isSeq(node)) {
    for (const item of node.items) {
      const problem = item === null ? undefined : walk(item as Node, path, document, out);
      if (problem) return problem;
    }
    return undefined;
  }
  if (!isScalar(node)) return "the file holds an alias; sops writes none";
  const text = leafText(node.value);
  if (text !== undefined) out.push({ document, path, text, encrypted: looksEncrypted(node.value) });
  return undefined;
}

function walkMap(
  items: readonly { key: unknown; value: unknown }[],
  path: string[],
  document: number,
  out: SopsLeaf[],
  top: boolean,
): string | undefined {
  for (const pair of items) {
    if (!isScalar(pair.key)) return "a key is not a scalar";
    const key = String(pair.key.value);
    if ((top && key === "sops") || pair.value === null) continue;
    const problem = walk(pair.value as Node, [...path, key], document, out);
    if (problem) return problem;
  }
  return undefined;
}

/** A scalar's text as sops hashes it (Go's strconv formatting), undefined for null. */
export function leafText(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === "boolean") return value ? "True" : "False";
  if (typeof value === "number") return goFloat(value);
  if (typeof value === "bigint") return value.toString();
  return String(value);
}

// strconv.FormatFloat(v, 'f', -1, 64): the shortest digits that read back, never an exponent.
function goFloat(value: number): string {
  const shortest = String(value);
  if (!/e/i.test(shortest)) return shortest;
  const [mantissa = "", exponentText = "0"] = shortest.split(/e/i);
  const exponent = Number(exponentText);
  const negative = mantissa.startsWith("-");
  const digits = mantissa.replace(/^-/, "").replace(".", "");
  const point = (mantissa.replace(/^-/, "").split(".")[0] ?? "").length + exponent;
  const body =
    point <= 0
      ? `0.${"0".repeat(-point)}${digits}`
      : point >= digits.length
        ? digits + "0".repeat(point - digits.length)
        : `${digits.slice(0, point)}.${digits.slice(point)}`;
  return (negative ? "-" : "") + body;
}

/** Where an opened value is found among a file's: its document and key path. */
export function sopsValueKey(document: number, path: readonly string[]): string {
  return `${document}\0${path.join("\0")}`;
}

/** One age recipient of a sops file, and the file's data key encrypted to it (an armored age file). */
export interface AgeStanza {
  readonly recipient: string;
  readonly enc: string;
}

/**
 * What it takes to decrypt a sops file and check it was not changed: the data key wrapped for each
 * age recipient, the encrypted MAC over every value and the time it is bound to, and the file's
 * leaves in sops's order. Plain data: the controller decrypts at sync, with keys the model never sees.
 */
export interface SopsEnvelope {
  readonly file: string;
  readonly age: readonly AgeStanza[];
  readonly lastModified: string;
  readonly mac: string;
  /** sops `mac_only_encrypted`: the MAC covers encrypted values only. */
  readonly macOnlyEncrypted: boolean;
  readonly leaves: readonly SopsLeaf[];
}

/** A Secret read from a sops file: the file's envelope and which of its documents the Secret is. */
export interface SealedSecret {
  readonly envelope: SopsEnvelope;
  readonly document: number;
}
