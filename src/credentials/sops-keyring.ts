import { createDecipheriv, createHash, type Hash, timingSafeEqual } from "node:crypto";
import { armor, Decrypter } from "age-encryption";
import type { SopsEnvelope } from "../model/sops-file.js";
import { leafText, parseSopsCiphertext, sopsValueKey } from "../model/sops-file.js";

/** The opened values of one sops file: each encrypted leaf's plaintext, by sopsValueKey. */
export type OpenedSopsFile = ReadonlyMap<string, string>;

// sops's fixed prefix of the MAC over encrypted values only (mac_only_encrypted), so it never
// equals the MAC over every value.
const MAC_ONLY_ENCRYPTED_PREFIX = Buffer.from(
  "8a3fd2ad54ce66527b1034f3d147be0b0b975b3bf44f72c6fdadec8176f27d69",
  "hex",
);
const CACHED_FILES = 4096;
const IDENTITY = /^AGE-SECRET-KEY-(?:PQ-)?1[02-9AC-HJ-NP-Z]+$/;

/**
 * The age identities the operator gave the controller (`--sops-age-key-file`), and what they open:
 * sops files' values, each checked against the file's MAC, as `sops decrypt` checks them. Opened
 * files are kept by their exact contents, so an unchanged file is opened once. Nothing opened is
 * ever logged or written; callers put the values only into what they apply.
 */
/**
 * The identities of an age key file (as age-keygen writes it: one AGE-SECRET-KEY-1… per line, comments
 * after #). Throws, naming the line, on anything else, and when it holds none; never says a key.
 */
export function ageIdentities(text: string): string[] {
  const identities: string[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    if (!IDENTITY.test(line)) throw new Error(`line ${i + 1} is not an age identity (AGE-SECRET-KEY-1…)`);
    identities.push(line);
  });
  if (identities.length === 0) throw new Error("the file holds no age identity (AGE-SECRET-KEY-1…)");
  return identities;
}

export class SopsKeyring {
  private readonly opened = new Map<string, Promise<OpenedSopsFile>>();

  private constructor(private readonly identities: readonly string[]) {}

  /**
   * The identities of an age key file (as age-keygen writes it: one AGE-SECRET-KEY-1… per line,
   * comments after #). Throws, naming the line, on anything else, and when it holds none.
   */
  static fromKeyFile(text: string): SopsKeyring {
    return new SopsKeyring(ageIdentities(text));
  }

  /** How many identities it holds (said at start; the identities themselves never are). */
  get size(): number {
    return this.identities.length;
  }

  /** The file's values, opened and checked against its MAC; rejects with why it cannot be. */
  open(envelope: SopsEnvelope): Promise<OpenedSopsFile> {
    const key = createHash("sha256").update(JSON.stringify(envelope)).digest("hex");
    const known = this.opened.get(key);
    if (known) return known;
    const opening = this.openFile(envelope);
    // A file that cannot be opened now may be opened later (a key file replaced): not kept.
    opening.catch(() => this.opened.delete(key));
    if (this.opened.size >= CACHED_FILES) this.opened.delete(this.opened.keys().next().value ?? "");
    this.opened.set(key, opening);
    return opening;
  }

  private async openFile(envelope: SopsEnvelope): Promise<OpenedSopsFile> {
    const dataKey = await this.dataKey(envelope);
    const { values, hash } = decryptLeaves(envelope, dataKey);
    const mac = decryptValue(envelope.mac, dataKey, envelope.lastModified, "sops.mac");
    const computed = Buffer.from(hash.digest("hex").toUpperCase());
    const recorded = Buffer.from(mac.text);
    if (computed.length !== recorded.length || !timingSafeEqual(computed, recorded))
      throw new Error("its MAC does not match its values: the file was changed after sops encrypted it");
    return values;
  }

  // The file's data key, unwrapped by the first recipient one of the identities opens.
  private async dataKey(envelope: SopsEnvelope): Promise<Buffer> {
    const decrypter = new Decrypter();
    for (const identity of this.identities) decrypter.addIdentity(identity);
    for (const stanza of envelope.age) {
      let key: Uint8Array;
      try {
        key = await decrypter.decrypt(armor.decode(stanza.enc), "uint8array");
      } catch {
        continue; // another recipient's key, or one that does not open: try the next
      }
      if (key.length !== 32) throw new Error(`the data key wrapped for ${stanza.recipient} is not 32 bytes`);
      return Buffer.from(key);
    }
    const recipients = envelope.age.map((s) => s.recipient).join(", ");
    throw new Error(`no age key this controller holds opens it (its recipients: ${recipients || "none"})`);
  }
}

// Every encrypted leaf's plaintext, and the hash of the values sops puts under the file's MAC.
function decryptLeaves(envelope: SopsEnvelope, dataKey: Buffer): { values: Map<string, string>; hash: Hash } {
  const hash = createHash("sha512");
  if (envelope.macOnlyEncrypted) hash.update(MAC_ONLY_ENCRYPTED_PREFIX);
  const values = new Map<string, string>();
  for (const leaf of envelope.leaves) {
    const additional = `${leaf.path.join(":")}:`;
    const opened = leaf.encrypted
      ? decryptValue(leaf.text, dataKey, additional, leaf.path.join("."))
      : undefined;
    if (opened !== undefined) values.set(sopsValueKey(leaf.document, leaf.path), opened.text);
    if (opened?.comment) continue;
    if (!envelope.macOnlyEncrypted || leaf.encrypted) hash.update(opened ? opened.hashed : leaf.text);
  }
  return { values, hash };
}

// One value: its plaintext, and its bytes as sops hashes them into the MAC.
function decryptValue(
  value: string,
  key: Buffer,
  additional: string,
  place: string,
): { text: string; hashed: string | Buffer; comment: boolean } {
  const parsed = parseSopsCiphertext(value);
  if ("error" in parsed) throw new Error(`a value ${parsed.error}`);
  const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(parsed.iv, "base64"));
  decipher.setAAD(Buffer.from(additional));
  decipher.setAuthTag(Buffer.from(parsed.tag, "base64"));
  let plain: Buffer;
  try {
    plain = Buffer.concat([decipher.update(Buffer.from(parsed.data, "base64")), decipher.final()]);
  } catch {
    throw new Error(
      `${place} does not decrypt with the file's data key: changed, or moved from another place`,
    );
  }
  const text = plain.toString("utf-8");
  switch (parsed.type) {
    case "bytes":
      return { text, hashed: plain, comment: false };
    case "comment":
      return { text, hashed: plain, comment: true };
    case "int":
    case "float":
      return { text, hashed: leafText(Number(text)) ?? text, comment: false };
    case "bool":
      return { text, hashed: /^(?:1|t|T|TRUE|true|True)$/.test(text) ? "True" : "False", comment: false };
    default:
      return { text, hashed: text, comment: false };
  }
}
