import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { oneLine } from "../../src/model/one-line.js";
import { REDACTED, redactCredentials } from "../../src/model/redact.js";

const TOKEN = "ghp_PLANTEDtoken123notreal";

describe("redactCredentials", () => {
  it.each([
    [
      "the audit's header error: everything after Bearer",
      `Bearer GITFLEET_GIT_TOKEN=${TOKEN}\0SHELL=/bin/bash is not a legal HTTP header value`,
      `Bearer ${REDACTED}`,
    ],
    ["Basic credentials", `request with Basic ${TOKEN}`, `request with Basic ${REDACTED}`],
    [
      "a PEM block",
      `bad key -----BEGIN PRIVATE KEY-----\nMIIE${TOKEN}\n-----END PRIVATE KEY----- after`,
      "bad key [PEM block redacted] after",
    ],
    ["a PEM block cut short", `-----BEGIN CERTIFICATE-----\nMIIE${TOKEN}`, "[PEM block redacted]"],
    [
      "a JSON credential field",
      `{"token": "${TOKEN}", "server": "x"}`,
      `{"token": ${REDACTED}, "server": "x"}`,
    ],
    [
      "a YAML credential field",
      `client-key-data: ${TOKEN}\nserver: x`,
      `client-key-data: ${REDACTED}\nserver: x`,
    ],
    ["password=", `password=${TOKEN}&user=x`, `password=${REDACTED}&user=x`],
    [
      "an environment variable",
      `GITFLEET_GIT_TOKEN=${TOKEN} HOME=/x`,
      `GITFLEET_GIT_TOKEN=${REDACTED} HOME=/x`,
    ],
    ["AWS keys", `AWS_SECRET_ACCESS_KEY=${TOKEN}`, `AWS_SECRET_ACCESS_KEY=${REDACTED}`],
  ])("%s", (_name, text, expected) => {
    expect(redactCredentials(text)).toBe(expected);
  });

  it.each([
    "cluster east: Deployment shop/web: apply failed: 409 conflict with field manager kubectl",
    "west did not answer: no complete answer within 10000 ms",
    "Secret shop/db: the token field is missing",
    "the kubeconfig file west.yaml is not a regular file",
  ])("leaves ordinary messages alone: %s", (text) => {
    expect(redactCredentials(text)).toBe(text);
  });

  it("never lets a planted token through oneLine, whatever surrounds it", () => {
    const wrappers = fc.constantFrom(
      (t: string) => `Authorization: Bearer ${t}`,
      (t: string) => `"token":"${t}"`,
      (t: string) => `token: ${t}`,
      (t: string) => `-----BEGIN RSA PRIVATE KEY-----\n${t}\n-----END RSA PRIVATE KEY-----`,
      (t: string) => `MY_API_KEY=${t}`,
    );
    fc.assert(
      fc.property(
        fc.string({ maxLength: 200 }),
        wrappers,
        fc.string({ maxLength: 200 }),
        (before, wrap, after) => {
          const token = `${TOKEN}x`;
          expect(oneLine(`${before} ${wrap(token)}\n${after}`, 10_000)).not.toContain(token);
        },
      ),
    );
  });
});
