// Writes src/model/compiled-schemas.ts: the fleet schemas as ajv standalone code (run `npm run schemas`).
import { writeFileSync } from "node:fs";
import { compiledSchemasSource } from "../dist/src/model/schema-compiler.js";

writeFileSync(new URL("../src/model/compiled-schemas.ts", import.meta.url), compiledSchemasSource());
