import { redactCredentials } from "./redact.js";

/** Outside text kept in messages, status files and commits: at most this many characters, on one line. */
export const MAX_MESSAGE = 300;

/**
 * Text from outside (a member's answer, an error of a library) made safe to put in a commit message,
 * a status file or a log line: credential material is redacted (redact.ts), control characters and
 * line and paragraph separators become spaces, runs of white space one, and it is cut to `max`
 * characters — so it can never add a paragraph, a trailer or a line of its own, nor repeat a key.
 */
export function oneLine(text: string, max = MAX_MESSAGE): string {
  let flat = "";
  let space = false;
  for (const char of redactCredentials(text)) {
    const code = char.codePointAt(0) ?? 0;
    const blank =
      code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029 || /\s/.test(char);
    if (blank) space = flat !== "";
    else {
      flat += space ? ` ${char}` : char;
      space = false;
    }
    if (flat.length > max) break;
  }
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Text put into HTML or a chat's markup as text: &, < and > escaped, nothing else changed. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
