import type { Json, JsonMap } from "../apimachinery/json.js";
import { isPlainString } from "./yaml-emitter.js";

/** Thrown inside the reader when the text is not what emitYaml writes. */
class NotEmitted extends Error {}

const JSON_STRING = /^"(?:[^"\\]|\\.)*"/;
const NUMBER = /^-?[0-9]+(?:\.[0-9]+)?(?:e[-+][0-9]+)?$/;

/**
 * Reads back what emitYaml wrote — block maps and lists, plain and JSON-quoted strings, numbers,
 * booleans, null, `{}`, `[]` and literal blocks — an order of magnitude faster than a general YAML
 * parser, which matters when a restarted controller reads tens of thousands of its own status files.
 * Returns undefined for anything outside that subset, for the caller to read with a full parser.
 */
export function readEmittedYaml(text: string): Json | undefined {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const reader = new Reader(lines);
  try {
    const value = reader.node(0);
    return reader.done() ? value : undefined;
  } catch (error) {
    if (error instanceof NotEmitted) return undefined;
    throw error;
  }
}

class Reader {
  private at = 0;

  constructor(private readonly lines: string[]) {}

  done(): boolean {
    return this.at === this.lines.length;
  }

  node(indent: number): Json {
    const line = this.lines[this.at];
    if (line === undefined) throw new NotEmitted();
    const content = line.slice(indent);
    if (content.startsWith("- ")) return this.list(indent);
    if (entryOf(content)) return this.map(indent);
    this.at++;
    return scalar(content);
  }

  private map(indent: number): JsonMap {
    const map: JsonMap = {};
    const pad = " ".repeat(indent);
    for (
      let line = this.lines[this.at];
      line?.startsWith(pad) && line[indent] !== " ";
      line = this.lines[this.at]
    ) {
      const entry = entryOf(line.slice(indent));
      if (!entry) break;
      this.at++;
      const value = this.value(indent, entry.rest);
      Object.defineProperty(map, entry.key, { value, enumerable: true, writable: true, configurable: true });
    }
    return map;
  }

  private list(indent: number): Json[] {
    const list: Json[] = [];
    const dash = `${" ".repeat(indent)}- `;
    for (let line = this.lines[this.at]; line?.startsWith(dash); line = this.lines[this.at]) {
      const content = line.slice(indent + 2);
      if (content.startsWith("- ") || entryOf(content)) {
        // The item is a collection whose first line shares the dash's line: read it at its own indent.
        this.lines[this.at] = " ".repeat(indent + 2) + content;
        list.push(this.node(indent + 2));
      } else {
        this.at++;
        list.push(this.value(indent, content));
      }
    }
    return list;
  }

  // The value after "key:" (rest undefined: a collection on the next lines) or "- ".
  private value(indent: number, rest: string | undefined): Json {
    if (rest === undefined) {
      const next = this.lines[this.at] ?? "";
      return next.startsWith(`${" ".repeat(indent)}- `) ? this.list(indent) : this.map(indent + 2);
    }
    if (rest === "|" || rest === "|-") return this.block(indent + 2, rest === "|");
    return scalar(rest);
  }

  private block(indent: number, keepNewline: boolean): string {
    const pad = " ".repeat(indent);
    const body: string[] = [];
    for (
      let line = this.lines[this.at];
      line !== undefined && (line === "" || line.startsWith(pad));
      line = this.lines[this.at]
    ) {
      body.push(line.slice(indent));
      this.at++;
    }
    if (body.length === 0) throw new NotEmitted();
    return body.join("\n") + (keepNewline ? "\n" : "");
  }
}

// "key: value" or "key:", with a plain or JSON-quoted key; undefined when the content is a scalar.
function entryOf(content: string): { key: string; rest: string | undefined } | undefined {
  let key: string;
  let after: string;
  const quoted = JSON_STRING.exec(content);
  if (quoted) {
    key = JSON.parse(quoted[0]) as string;
    after = content.slice(quoted[0].length);
  } else {
    const colon = content.indexOf(": ");
    const end = colon >= 0 ? colon : content.endsWith(":") ? content.length - 1 : -1;
    if (end < 0) return undefined;
    key = content.slice(0, end);
    after = content.slice(end);
    if (!isPlainString(key)) throw new NotEmitted();
  }
  if (after === ":") return { key, rest: undefined };
  if (after.startsWith(": ")) return { key, rest: after.slice(2) };
  if (quoted && after === "") return undefined;
  throw new NotEmitted();
}

function scalar(token: string): Json {
  if (token.startsWith('"')) {
    const quoted = JSON_STRING.exec(token);
    if (quoted?.[0] !== token) throw new NotEmitted();
    return JSON.parse(token) as string;
  }
  if (token === "null") return null;
  if (token === "true" || token === "false") return token === "true";
  if (token === "[]") return [];
  if (token === "{}") return {};
  if (NUMBER.test(token)) return Number(token);
  if (isPlainString(token)) return token;
  throw new NotEmitted();
}
