import { isMap, isScalar, isSeq, type Node, parseDocument, type YAMLMap } from "yaml";

/**
 * The fields a JSON text gives twice in one object, as kube-apiserver's decoder reports them
 * (`data.v`, `spec.containers[0].name`). The text must be valid JSON (it was parsed before). An
 * explicit stack, not recursion: a body nested ten thousand deep is scanned like any other.
 */
export function duplicateJsonFields(text: string): string[] {
  const scan = new JsonScan();
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') i = scan.string(text, i);
    else if (c === "{" || c === "[") scan.open(c);
    else if (c === "}" || c === "]") scan.close();
    else if (c === ",") scan.next();
  }
  return scan.found;
}

type Frame =
  | {
      readonly kind: "object";
      readonly path: string;
      readonly keys: Set<string>;
      key: string;
      expectKey: boolean;
    }
  | { readonly kind: "array"; readonly path: string; index: number };

class JsonScan {
  readonly found: string[] = [];
  private readonly stack: Frame[] = [];

  open(bracket: "{" | "["): void {
    const path = this.here();
    this.stack.push(
      bracket === "{"
        ? { kind: "object", path, keys: new Set(), key: "", expectKey: true }
        : { kind: "array", path, index: 0 },
    );
  }

  close(): void {
    this.stack.pop();
  }

  next(): void {
    const top = this.stack.at(-1);
    if (top?.kind === "array") top.index++;
    else if (top) top.expectKey = true;
  }

  // The string starting at `start`: a key when an object waits for one. Returns where it ends.
  string(text: string, start: number): number {
    const end = closingQuote(text, start);
    const top = this.stack.at(-1);
    if (top?.kind !== "object" || !top.expectKey) return end;
    const raw = text.slice(start + 1, end);
    const key = raw.includes("\\") ? (JSON.parse(`"${raw}"`) as string) : raw;
    top.key = key;
    top.expectKey = false;
    if (top.keys.has(key)) this.found.push(this.here());
    else top.keys.add(key);
    return end;
  }

  // The path of the value being read.
  private here(): string {
    const top = this.stack.at(-1);
    if (!top) return "";
    if (top.kind === "array") return `${top.path}[${top.index}]`;
    return top.path === "" ? top.key : `${top.path}.${top.key}`;
  }
}

// The quote that ends the string opened at `start`: the next one not escaped (an odd run of
// backslashes before it escapes it).
function closingQuote(text: string, start: number): number {
  let at = text.indexOf('"', start + 1);
  while (at > 0) {
    let slashes = 0;
    while (text[at - 1 - slashes] === "\\") slashes++;
    if (slashes % 2 === 0) return at;
    at = text.indexOf('"', at + 1);
  }
  return text.length;
}

/** The same for a YAML text (an apply's configuration); the document's last value of a key wins. */
export function duplicateYamlFields(text: string): string[] {
  const found: string[] = [];
  const walk = (node: unknown, path: string): void => {
    if (isMap(node)) walkMap(node, path, found, walk);
    else if (isSeq(node)) for (const [i, item] of node.items.entries()) walk(item, `${path}[${i}]`);
  };
  walk(parseDocument(text, { uniqueKeys: false }).contents, "");
  return found;
}

function walkMap(
  node: YAMLMap,
  path: string,
  found: string[],
  walk: (node: unknown, path: string) => void,
): void {
  const keys = new Set<string>();
  for (const pair of node.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key as Node);
    const at = path === "" ? key : `${path}.${key}`;
    if (keys.has(key)) found.push(at);
    keys.add(key);
    walk(pair.value, at);
  }
}
