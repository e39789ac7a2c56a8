import { createPrivateKey, X509Certificate } from "node:crypto";

/** The largest PEM text gitfleet takes from a member: a CA chain or a private key is a few kilobytes. */
export const MAX_PEM_BYTES = 64 * 1024;

/** What PEM text may hold where gitfleet reads it. */
export type PemKind = "certificates" | "private key";

const KEY_LABELS = new Set(["PRIVATE KEY", "EC PRIVATE KEY", "RSA PRIVATE KEY"]);

/**
 * Checks credential material that came from outside (a Secret in a member): at most MAX_PEM_BYTES,
 * nothing but PEM blocks — one or more certificates, or exactly one private key — each of which
 * parses. Returns the text, or why it is refused; the reason never quotes the text.
 */
export function checkPem(text: string, kind: PemKind): { pem: string } | { error: string } {
  if (text.length > MAX_PEM_BYTES) return { error: `is larger than ${MAX_PEM_BYTES} bytes` };
  const blocks = pemBlocks(text);
  if (!blocks || blocks.length === 0) return { error: "is not PEM" };
  if (kind === "private key") {
    const [only] = blocks;
    if (blocks.length !== 1 || !only || !KEY_LABELS.has(only.label))
      return { error: "is not one PEM private key" };
    try {
      createPrivateKey(only.text);
    } catch {
      return { error: "is not a private key that parses" };
    }
    return { pem: text };
  }
  for (const block of blocks) {
    if (block.label !== "CERTIFICATE") return { error: "holds a PEM block that is not a certificate" };
    try {
      new X509Certificate(block.text);
    } catch {
      return { error: "holds a certificate that does not parse" };
    }
  }
  return { pem: text };
}

// The PEM blocks of a text that holds nothing else (white space aside), or undefined. A line scanner,
// not a regular expression: its cost is linear whatever the text.
function pemBlocks(text: string): { label: string; text: string }[] | undefined {
  const lines = text.split(/\r?\n/).map((line) => line.trim());
  const blocks: { label: string; text: string }[] = [];
  let open: { label: string; lines: string[] } | undefined;
  for (const line of lines) {
    if (open === undefined) {
      if (line === "") continue;
      const begin = /^-----BEGIN ([A-Z0-9 ]{1,40})-----$/.exec(line);
      if (!begin) return undefined;
      open = { label: begin[1] as string, lines: [line] };
      continue;
    }
    open.lines.push(line);
    if (line === `-----END ${open.label}-----`) {
      blocks.push({ label: open.label, text: `${open.lines.join("\n")}\n` });
      open = undefined;
    } else if (!/^[A-Za-z0-9+/=]{1,76}$/.test(line)) return undefined;
  }
  return open === undefined ? blocks : undefined;
}
