import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { importGraph, SRC, sourceFiles } from "../helpers/import-graph.js";
import { IMPURE, LAYOUT } from "./layout.js";

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

  it.each(Object.entries(LAYOUT))("%s/ says in its README what it is", (name, folder) => {
    const readme = readFileSync(join(SRC, name, "README.md"), "utf8");
    expect(readme.split("\n")[0]).toMatch(new RegExp(`^# ${name}/ — ${folder.kind}\\b`));
  });
});
