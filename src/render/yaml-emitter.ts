import { isJsonMap as isMap, type Json } from "../apimachinery/json.js";

/**
 * A small YAML emitter for JSON data, written for speed and byte-stability (the `yaml` package's
 * stringify is most of a large render's time). Block style, two-space indents, lists at their key's
 * indentation (kubectl's style); strings plain when YAML 1.1 — what kubectl reads — would read them
 * back as the same string, double-quoted JSON otherwise, literal blocks for multi-line text.
 */
export function emitYaml(value: Json): string {
  const lines: string[] = [];
  emitValue(value, 0, lines);
  return `${lines.join("\n")}\n`;
}

function emitValue(value: Json, indent: number, lines: string[]): void {
  if (Array.isArray(value) && value.length > 0) emitList(value, indent, lines);
  else if (isMap(value) && Object.keys(value).length > 0) emitMap(value, indent, lines);
  else lines.push(" ".repeat(indent) + scalar(value, indent));
}

function emitMap(map: { [key: string]: Json }, indent: number, lines: string[]): void {
  const pad = " ".repeat(indent);
  for (const [key, child] of Object.entries(map)) {
    const head = `${pad}${plainOrQuoted(key)}:`;
    if (isCollection(child)) {
      lines.push(head);
      emitValue(child, Array.isArray(child) ? indent : indent + 2, lines);
    } else {
      lines.push(`${head} ${scalar(child, indent + 2)}`);
    }
  }
}

function emitList(list: Json[], indent: number, lines: string[]): void {
  const pad = " ".repeat(indent);
  for (const item of list) {
    if (!isCollection(item)) {
      lines.push(`${pad}- ${scalar(item, indent + 2)}`);
      continue;
    }
    const nested: string[] = [];
    emitValue(item, indent + 2, nested);
    const [first = "", ...rest] = nested;
    lines.push(`${pad}- ${first.slice(indent + 2)}`, ...rest);
  }
}

function isCollection(value: Json): boolean {
  return (Array.isArray(value) && value.length > 0) || (isMap(value) && Object.keys(value).length > 0);
}

function scalar(value: Json, indent: number): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "[]";
  if (typeof value === "object") return "{}";
  if (typeof value === "number")
    return Number.isFinite(value) ? String(value) : JSON.stringify(String(value));
  if (typeof value === "boolean") return String(value);
  if (value.includes("\n") && isBlockSafe(value)) return literalBlock(value, indent);
  return plainOrQuoted(value);
}

// Lines a literal block cannot carry faithfully: trailing spaces, leading spaces on the first line,
// tabs and other control characters.
function isBlockSafe(text: string): boolean {
  if (/[ \t]\n|[ \t]$|^[ \t]/.test(text) || text.endsWith("\n\n")) return false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if ((code < 0x20 && code !== 0x0a) || code === 0x7f) return false;
  }
  return true;
}

function literalBlock(text: string, indent: number): string {
  const chomp = text.endsWith("\n") ? "|" : "|-";
  const body = (text.endsWith("\n") ? text.slice(0, -1) : text).split("\n");
  const pad = " ".repeat(indent);
  return `${chomp}\n${body.map((line) => (line === "" ? "" : pad + line)).join("\n")}`;
}

// Strings YAML 1.1 would read as something else (booleans, null, numbers, dates) or that contain
// syntax must be quoted; everything else stays plain, as a person would write it.
const PLAIN = /^[A-Za-z0-9_./-][A-Za-z0-9 _./=+@:(),;-]*$/;
const AMBIGUOUS =
  /^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|null|Null|NULL|~|[-+]?(?:\.[0-9]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?0x[0-9a-fA-F_]+|[-+]?0b[01_]+|[-+]?0o?[0-7_]+|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)|[-+]?(?:[0-9][0-9_]*)?\.[0-9._]*(?:[eE][-+]?[0-9]+)?|[-+]?[0-9_]*(?:\.[0-9_]*)?[eE][-+]?[0-9]+|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}.*|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?)$/;

function plainOrQuoted(text: string): string {
  return isPlainString(text) ? text : JSON.stringify(text);
}

/** True when the emitter writes this string unquoted. */
export function isPlainString(text: string): boolean {
  const plain = text !== "" && PLAIN.test(text) && !AMBIGUOUS.test(text) && !text.startsWith("-");
  // ": " starts a mapping value and " #" a comment; a trailing space or colon would be lost or misread.
  return plain && !text.includes(": ") && !text.includes(" #") && !text.endsWith(" ") && !text.endsWith(":");
}
