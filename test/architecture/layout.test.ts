import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { importGraph, SRC, sourceFiles } from "../helpers/import-graph.js";
import { IMPURE, LAYOUT, LONG_FILES, MAX_FILE_LINES, POLICY_ENTRY } from "./layout.js";

/**
 * The layout holds: every folder of src/ is in the table, imports only what the table lets it, a pure
 * folder touches no I/O, clock, randomness or environment, and says so in its README.
 */
const folderOf = (file: string) => relative(SRC, file).split("/")[0] as string;
const folders = readdirSync(SRC, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);
const files = sourceFiles(SRC);

// Every import of a file into another folder of src/, as [from folder, to folder, file].
function crossings(): [string, string, string][] {
  return [...importGraph()].flatMap(([file, targets]) =>
    targets
      .map((target): [string, string, string] => [folderOf(file), folderOf(target), relative(SRC, file)])
      .filter(([from, to]) => from !== to),
  );
}

describe("the layout of src/", () => {
  it("has a row in the table for every folder, and a folder for every row", () => {
    expect([...folders].sort()).toEqual(Object.keys(LAYOUT).sort());
  });

  it("lets no pure folder import an edge folder", () => {
    const wrong = Object.entries(LAYOUT).flatMap(([name, folder]) =>
      folder.kind === "pure"
        ? folder.imports.filter((i) => LAYOUT[i]?.kind !== "pure").map((i) => `${name} → ${i}`)
        : [],
    );
    expect(wrong).toEqual([]);
  });

  it("imports across folders only as the table allows", () => {
    const wrong = crossings()
      .filter(([from, to]) => !LAYOUT[from]?.imports.includes(to))
      .map(
        ([from, to, file]) =>
          `${file} imports ${to}/ (${from}/ may import: ${LAYOUT[from]?.imports.join(", ") || "nothing"})`,
      );
    expect(wrong).toEqual([]);
  });

  const pureFiles = files.filter((file) => LAYOUT[folderOf(file)]?.kind === "pure");
  it("has pure files to check", () => {
    expect(pureFiles.length).toBeGreaterThan(100);
  });

  it.each(IMPURE)("keeps pure folders away from %s", (_what, pattern) => {
    const offenders = pureFiles
      .filter((file) => pattern.test(readFileSync(file, "utf8")))
      .map((file) => relative(SRC, file));
    expect(offenders).toEqual([]);
  });

  it.each(Object.entries(LAYOUT))("%s/ says in its README what it is and what it imports", (name, folder) => {
    const readme = readFileSync(join(SRC, name, "README.md"), "utf8");
    expect(readme.split("\n")[0]).toMatch(new RegExp(`^# ${name}/ — ${folder.kind}\\b`));
    const imports = [...folder.imports].sort().map((i) => `${i}/`);
    const line = `Imports: ${imports.length > 0 ? imports.join(", ") : "nothing else in src/"}.`;
    // One import line, the table's, and no other sentence about imports to drift from it.
    expect(readme.split("\n").filter((l) => /\bImports\b/.test(l))).toEqual([line]);
  });

  it.each(Object.keys(LAYOUT))("%s/'s README lists what the folder holds, no more and no less", (name) => {
    const readme = readFileSync(join(SRC, name, "README.md"), "utf8");
    const entries = readdirSync(join(SRC, name), { withFileTypes: true })
      .filter((entry) => entry.name !== "README.md")
      .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name))
      .sort();
    // One file line, the folder's own: a file added, moved or removed shows here first.
    expect(readme.split("\n").filter((l) => l.startsWith("Files: "))).toEqual([
      `Files: ${entries.join(", ")}.`,
    ]);
  });

  it.each(Object.keys(LAYOUT))("%s/'s README names each folder inside it", (name) => {
    const readme = readFileSync(join(SRC, name, "README.md"), "utf8");
    const inside = readdirSync(join(SRC, name), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `${entry.name}/`);
    expect(inside.filter((folder) => !readme.includes(folder))).toEqual([]);
  });

  it(`keeps every file within ${MAX_FILE_LINES} lines, or lists why not`, () => {
    const lines = (file: string) => readFileSync(file, "utf8").split("\n").length - 1;
    const long = files.filter((file) => lines(file) > MAX_FILE_LINES).map((file) => relative(SRC, file));
    expect(long.filter((file) => !(file in LONG_FILES))).toEqual([]);
    // A listed file that shrank is taken off the list.
    expect(Object.keys(LONG_FILES).filter((file) => !long.includes(file))).toEqual([]);
  });

  it("lets the controller reach the policies only through their registry", () => {
    const wrong = [...importGraph()]
      .filter(([file]) => folderOf(file) === "controller")
      .flatMap(([file, targets]) =>
        targets
          .map((target) => relative(SRC, target))
          .filter((target) => target.startsWith("policy/") && !POLICY_ENTRY.includes(target))
          .map((target) => `${relative(SRC, file)} imports ${target}`),
      );
    expect(wrong).toEqual([]);
  });
});
