import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { compiledSchemasSource } from "../../src/model/schema-compiler.js";

/** The precompiled validators are the schemas as they are now: `npm run schemas` after changing schema/. */
describe("model/compiled-schemas.ts", () => {
  it("is what the schemas compile to", () => {
    const committed = readFileSync(new URL("../../src/model/compiled-schemas.ts", import.meta.url), "utf8");
    expect(
      committed === compiledSchemasSource(),
      "src/model/compiled-schemas.ts is stale: run npm run schemas",
    ).toBe(true);
  });
});
