// Paths inside the fleet repo's file tree: "/"-separated, relative to its root.

/** A name relative to a directory ("" is the root). */
export function joinPath(dir: string, name: string): string {
  return dir === "" ? name : `${dir}/${name}`;
}

/** A path with "." and ".." resolved; undefined when it climbs above the tree's root. */
export function normalizePath(path: string): string | undefined {
  const parts: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length === 0) return undefined;
      parts.pop();
    } else parts.push(part);
  }
  return parts.join("/");
}
