// Writes docs/cli-reference.md from the command definitions (run `npm run docs`).
import { writeFileSync } from "node:fs";
import { cliReference } from "../dist/src/cli/cli-reference.js";
import { buildProgram } from "../dist/src/cli/main.js";

const program = buildProgram({ out: () => {}, err: () => {} }, () => {});
writeFileSync(new URL("../docs/cli-reference.md", import.meta.url), cliReference(program));
