import { isRecord } from "./read-gitfleet-object.js";
import type { Reporter } from "./reporter.js";
import {
  type AgeStanza,
  looksEncrypted,
  parseSopsCiphertext,
  type SealedSecret,
  type SopsEnvelope,
  type SopsLeaf,
  sopsLeaves,
} from "./sops-file.js";
import type { SourceDocument } from "./yaml-source.js";

/** The most age recipients one file may name, and the longest wrapped key gitfleet reads. */
export const MAX_AGE_RECIPIENTS = 32;
export const MAX_AGE_STANZA_CHARS = 8192;

const SECRET_FIELDS = ["data", "stringData"];
const AGE_RECIPIENT = /^age1(?:[a-z0-9]+1)?[02-9ac-hj-np-z]{58,}$/;
const AGE_ARMOR = /^-----BEGIN AGE ENCRYPTED FILE-----\r?\n[\s\S]*-----END AGE ENCRYPTED FILE-----\s*$/;
const LEAVES = new WeakMap<Uint8Array, SopsLeaf[] | { readonly error: string }>();
const ENCRYPT_HINT = "encrypt only its values: sops encrypt --encrypted-regex '^(data|stringData)$'";

/**
 * A document of an app's directory as a sops-encrypted Secret, when it carries sops's `sops` block:
 * the object without that block, and its envelope. gitfleet must know what an encrypted file is
 * before it has keys (the plan, the status branch and the rollout read it), so only a v1 Secret's
 * `data` and `stringData` values may be encrypted, each of them must be, and the block must name
 * at least one age recipient. What does not hold is an error at its place, and the result has no
 * envelope (the document is not read further). Undefined for a document without a `sops` block.
 */
export function readSopsSecret(
  source: SourceDocument,
  reporter: Reporter,
): { readonly object: Record<string, unknown>; readonly sealed?: SealedSecret } | undefined {
  const value = source.value;
  if (!isRecord(value) || !("sops" in value)) return undefined;
  const { sops, ...object } = value;
  const origin = { file: source.file, index: source.index };
  const report = (path: readonly (string | number)[], message: string) =>
    reporter.report({ origin, path, code: "SOPS_FORMAT", message });
  const before = reporter.problems.length;
  if (looksEncrypted(object.apiVersion) || looksEncrypted(object.kind))
    report(
      ["apiVersion"],
      `the whole document is encrypted; gitfleet needs its apiVersion, kind and metadata to plan it: ${ENCRYPT_HINT}`,
    );
  else if (object.apiVersion !== "v1" || object.kind !== "Secret")
    report(
      ["sops"],
      "gitfleet decrypts only Secrets (v1); keep other objects in the clear, or generate them from a Secret",
    );
  else checkValues(object, report);
  const envelope = readEnvelope(source, sops, report);
  if (reporter.problems.length > before || !envelope) return { object };
  return { object, sealed: { envelope, document: source.index } };
}

type Report = (path: readonly (string | number)[], message: string) => void;

// Every value of data and stringData encrypted, and nothing else.
function checkValues(object: Record<string, unknown>, report: Report): void {
  for (const field of SECRET_FIELDS) {
    const values = object[field];
    // The schema check says what a Secret's data must be.
    if (isRecord(values))
      for (const [key, value] of Object.entries(values)) checkValue(value, [field, key], report);
  }
  for (const [field, value] of Object.entries(object))
    if (!SECRET_FIELDS.includes(field)) reportEncrypted(value, [field], report);
}

function checkValue(value: unknown, path: readonly string[], report: Report): void {
  if (!looksEncrypted(value)) {
    report(path, `holds a value in the clear in an encrypted Secret; ${ENCRYPT_HINT}`);
    return;
  }
  const parsed = parseSopsCiphertext(value);
  if ("error" in parsed) report(path, `the value ${parsed.error}`);
}

function reportEncrypted(value: unknown, path: (string | number)[], report: Report): void {
  if (looksEncrypted(value)) {
    report(
      path,
      `is encrypted; gitfleet needs everything but a Secret's data and stringData in the clear: ${ENCRYPT_HINT}`,
    );
    return;
  }
  const items: [string | number, unknown][] = Array.isArray(value)
    ? value.map((item, i) => [i, item])
    : isRecord(value)
      ? Object.entries(value)
      : [];
  for (const [key, item] of items) reportEncrypted(item, [...path, key], report);
}

// The sops block: age recipients with their wrapped keys, the MAC and the time it is bound to.
function readEnvelope(source: SourceDocument, sops: unknown, report: Report): SopsEnvelope | undefined {
  if (!isRecord(sops)) {
    report(["sops"], "the sops block must be a mapping, as sops writes it");
    return undefined;
  }
  const { lastmodified, mac, age } = sops;
  if (typeof lastmodified !== "string")
    report(["sops", "lastmodified"], "the sops block needs lastmodified, the time its MAC is bound to");
  if (typeof mac !== "string") report(["sops", "mac"], "the sops block needs the file's MAC");
  else if ("error" in parseSopsCiphertext(mac))
    report(["sops", "mac"], "the MAC is not an encrypted value as sops writes it");
  if (Array.isArray(sops.key_groups) && sops.key_groups.length > 0)
    report(
      ["sops", "key_groups"],
      "gitfleet decrypts files whose age recipients each hold the whole data key; it cannot join key groups' shares",
    );
  const stanzas = ageStanzas(age, report);
  if (stanzas.length === 0 && age === undefined)
    report(
      ["sops"],
      "the file names no age recipient; gitfleet decrypts with age keys: sops encrypt --age <recipient>",
    );
  const leaves = leavesOf(source);
  if ("error" in leaves) report([], `the sops file cannot be read as sops reads it: ${leaves.error}`);
  if (typeof lastmodified !== "string" || typeof mac !== "string" || "error" in leaves) return undefined;
  return {
    file: source.file,
    age: stanzas,
    lastModified: lastmodified,
    mac,
    macOnlyEncrypted: sops.mac_only_encrypted === true,
    leaves,
  };
}

function ageStanzas(age: unknown, report: Report): AgeStanza[] {
  if (age === undefined) return [];
  if (!Array.isArray(age) || age.length === 0) {
    report(
      ["sops", "age"],
      "age must list the file's recipients, each with its wrapped key (recipient, enc)",
    );
    return [];
  }
  if (age.length > MAX_AGE_RECIPIENTS) {
    report(
      ["sops", "age"],
      `a file may name at most ${MAX_AGE_RECIPIENTS} age recipients; it names ${age.length}`,
    );
    return [];
  }
  const stanzas: AgeStanza[] = [];
  age.forEach((entry, i) => {
    const recipient = isRecord(entry) ? entry.recipient : undefined;
    const enc = isRecord(entry) ? entry.enc : undefined;
    if (typeof recipient !== "string" || !AGE_RECIPIENT.test(recipient))
      report(["sops", "age", i, "recipient"], "is not an age recipient (age1…)");
    else if (typeof enc !== "string" || enc.length > MAX_AGE_STANZA_CHARS || !AGE_ARMOR.test(enc))
      report(
        ["sops", "age", i, "enc"],
        `must be the data key as an armored age file of at most ${MAX_AGE_STANZA_CHARS} characters`,
      );
    else stanzas.push({ recipient, enc });
  });
  return stanzas;
}

// A file's leaves are walked once, whichever of its documents asks first.
function leavesOf(source: SourceDocument): SopsLeaf[] | { readonly error: string } {
  const known = LEAVES.get(source.syntax.bytes);
  if (known) return known;
  const leaves = sopsLeaves(source.syntax.bytes);
  LEAVES.set(source.syntax.bytes, leaves);
  return leaves;
}

/** A sealed Secret with each data and stringData value empty: its shape, for checks that read no value. */
export function withValuesEmpty(object: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const view: Record<string, unknown> = { ...object };
  for (const field of SECRET_FIELDS) {
    const values = object[field];
    if (isRecord(values)) view[field] = Object.fromEntries(Object.keys(values).map((key) => [key, ""]));
  }
  return view;
}
