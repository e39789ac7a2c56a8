import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/log/logger.js";

// Obviously fake values, planted to prove they never reach a log line.
const FAKE_TOKEN = "fake-token-0000-for-tests";
const FAKE_PASSWORD = "fake-password-for-tests";

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString("utf8"));
      done();
    },
  });
  return { lines, logger: createLogger({ destination }) };
}

describe("the logger", () => {
  it("redacts tokens, passwords, authorization headers and Secret data wherever they appear", () => {
    const { lines, logger } = capture();
    logger.info({ token: FAKE_TOKEN }, "git fetch");
    logger.info({ request: { headers: { authorization: `Bearer ${FAKE_TOKEN}` } } }, "webhook");
    logger.warn(
      { object: { kind: "Secret", data: { password: FAKE_PASSWORD }, stringData: { p: FAKE_PASSWORD } } },
      "apply",
    );
    logger.error({ cluster: { name: "east", password: FAKE_PASSWORD } }, "probe");
    const text = lines.join("");
    expect(lines).toHaveLength(4);
    expect(text).not.toContain(FAKE_TOKEN);
    expect(text).not.toContain(FAKE_PASSWORD);
    expect(text).toContain("[redacted]");
    expect(JSON.parse(lines[0] ?? "{}")).toMatchObject({
      msg: "git fetch",
      token: "[redacted]",
      name: "gitfleet",
    });
  });

  it("redacts at any depth and in any letter case, and survives cycles", () => {
    const { lines, logger } = capture();
    const deep: Record<string, unknown> = {
      a: { b: { c: { d: { Password: FAKE_PASSWORD, items: [{ TOKEN: FAKE_TOKEN }] } } } },
    };
    deep.self = deep;
    logger.info({ deep, headers: { "X-Hub-Signature-256": `sha256=${FAKE_TOKEN}` } }, "webhook");
    const text = lines.join("");
    expect(text).not.toContain(FAKE_TOKEN);
    expect(text).not.toContain(FAKE_PASSWORD);
    expect(JSON.parse(lines[0] ?? "{}").deep.a.b.c.d).toEqual({
      Password: "[redacted]",
      items: [{ TOKEN: "[redacted]" }],
    });
  });
});
