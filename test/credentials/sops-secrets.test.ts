import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { SopsKeyring } from "../../src/credentials/sops-keyring.js";
import { openSecrets } from "../../src/kube/open-secrets.js";
import { loadFleet } from "../../src/load/load-fleet.js";
import { describeModelContents } from "../../src/load/summary.js";
import { formatProblem } from "../../src/model/problem.js";
import type { FleetModel } from "../../src/model/types.js";
import { formatPlanMarkdown, formatPlanText } from "../../src/plan/format-plan.js";
import { planChange } from "../../src/plan/plan.js";
import { renderFleet } from "../../src/render/render-fleet.js";
import { desiredByCluster } from "../../src/sync/desired-objects.js";
import { minimalFleetWith } from "../helpers/minimal-fleet.js";
import { type AgeKey, ageKey, ageKeyFile, sopsDecrypt, sopsEncrypt, sopsSet } from "../helpers/sops.js";

/**
 * sops-encrypted Secrets: fixtures encrypted by the real sops (v3.13.3, built from its Go module),
 * read by validation without keys, and opened by gitfleet's keyring exactly as `sops decrypt` opens
 * them — or refused, naming why, when a byte of them was changed.
 */

const TOKEN = Buffer.from("token-for-tests-only").toString("base64");
const SECRET = `apiVersion: v1
kind: Secret
metadata:
  name: db
  labels:
    tier: data
type: Opaque
stringData:
  password: hunter2-test-only
  "10": ten
  port: "5432"
data:
  token: ${TOKEN}
`;
const ID = "/Secret/shop/db";

let key: AgeKey;
let other: AgeKey;
let encrypted: string;
beforeAll(async () => {
  [key, other] = await Promise.all([ageKey(), ageKey()]);
  encrypted = sopsEncrypt(SECRET, [key.recipient]);
}, 600_000);

function load(files: Record<string, string>) {
  return loadFleet(minimalFleetWith(files));
}

function modelOf(files: Record<string, string>): FleetModel {
  const result = load(files);
  if (!result.model) throw new Error(result.problems.map(formatProblem).join("\n"));
  return result.model;
}

function errors(files: Record<string, string>): string[] {
  return load(files)
    .problems.filter((p) => p.severity === "error")
    .map(formatProblem);
}

async function open(text: string, keys: readonly AgeKey[] = [key]) {
  return openSecrets(modelOf({ "apps/web/secret.yaml": text }), SopsKeyring.fromKeyFile(ageKeyFile(keys)));
}

// The 1-based line of the first line of `text` that starts with `prefix`.
function lineOf(text: string, prefix: string): number {
  return text.split("\n").findIndex((l) => l.startsWith(prefix)) + 1;
}

describe("opening what the real sops encrypted", () => {
  it("gives the values sops decrypt gives, keys in their written order", async () => {
    const opened = await open(encrypted);
    const truth = parse(sopsDecrypt(encrypted, [key]));
    expect(opened.get(ID)).toEqual({ stringData: truth.stringData, data: truth.data });
    expect(opened.get(ID)).toEqual({
      stringData: { password: "hunter2-test-only", "10": "ten", port: "5432" },
      data: { token: TOKEN },
    });
  });

  it.each([
    [
      "a file encrypted to two recipients, the key for the second",
      () => sopsEncrypt(SECRET, [other.recipient, key.recipient]),
      () => other.recipient,
    ],
    [
      "a MAC over the encrypted values only",
      () =>
        sopsEncrypt(
          SECRET,
          [key.recipient],
          [],
          "creation_rules:\n  - encrypted_regex: ^(data|stringData)$\n    mac_only_encrypted: true\n",
        ),
      () => "mac_only_encrypted: true",
    ],
    [
      "values chosen by suffix instead",
      () =>
        sopsEncrypt(
          SECRET.replace(/stringData:\n {2}password/, "stringData:\n  password"),
          [key.recipient],
          ["--unencrypted-regex", "^(apiVersion|kind|metadata|type|name|labels|tier)$"],
        ),
      () => "unencrypted_regex",
    ],
  ])("opens %s", async (_, make, marker) => {
    const text = make();
    expect(text).toContain(marker());
    expect((await open(text)).get(ID)).toMatchObject({ stringData: { password: "hunter2-test-only" } });
  });

  it("opens every Secret of a multi-document file under its one MAC", async () => {
    const two = sopsEncrypt(
      `${SECRET}---\n${SECRET.replace("name: db", "name: cache").replace("hunter2-test-only", "second-test-only")}`,
      [key.recipient],
    );
    const opened = await open(two);
    expect(opened.get(ID)).toMatchObject({ stringData: { password: "hunter2-test-only" } });
    expect(opened.get("/Secret/shop/cache")).toMatchObject({ stringData: { password: "second-test-only" } });
  });

  // Each change an attacker (or a bad merge) could make to an encrypted file, and what it meets.
  it.each([
    [
      "a value in the clear changed",
      (t: string) => t.replace("tier: data", "tier: date"),
      /MAC does not match its values/,
    ],
    [
      "a key removed",
      (t: string) =>
        t
          .split("\n")
          .filter((l) => !l.trimStart().startsWith("port:"))
          .join("\n"),
      /MAC does not match its values/,
    ],
    [
      "two ciphertexts swapped",
      (t: string) => swapValues(t, "password", "port"),
      /stringData\.password does not decrypt with the file's data key/,
    ],
    [
      "a ciphertext's byte flipped",
      (t: string) =>
        t.replace(/(password: ENC\[AES256_GCM,data:)(.)/, (_, a, c) => a + (c === "A" ? "B" : "A")),
      /stringData\.password does not decrypt/,
    ],
    [
      "another file's MAC",
      (t: string) =>
        t.replace(
          /mac: ENC\[[^\]]+\]/,
          `mac: ${/mac: (ENC\[[^\]]+\])/.exec(sopsEncrypt(SECRET, [key.recipient]))?.[1]}`,
        ),
      /sops\.mac does not decrypt/,
    ],
  ])("refuses %s", async (_, tamper, error) => {
    const opened = (await open(tamper(encrypted))).get(ID);
    expect(opened).toEqual({ error: expect.stringMatching(error) });
  });

  it("names the file's recipients when no key it holds opens it", async () => {
    expect((await open(encrypted, [other])).get(ID)).toEqual({
      error: `no age key this controller holds opens it (its recipients: ${key.recipient})`,
    });
  });

  it("agrees with sops decrypt on random Secrets", async () => {
    // Key names a Secret may have: fast-check also offers "__proto__", which validation refuses
    // (FORBIDDEN_KEY) before anything is opened (seed -683421191), and "." and ".." are not keys.
    const keyName = fc
      .stringMatching(/^[A-Za-z0-9._-]{1,20}$/)
      .filter((k) => k !== "__proto__" && k !== "." && k !== "..");
    const value = fc
      .string({ minLength: 1, maxLength: 40 })
      .filter((v) => [...v].every((c) => c >= " " && c !== "\u007f"));
    await fc.assert(
      fc.asyncProperty(fc.dictionary(keyName, value, { minKeys: 1, maxKeys: 6 }), async (values) => {
        const plain = `apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n${Object.entries(
          values,
        )
          .map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`)
          .join("\n")}\n`;
        const file = sopsEncrypt(plain, [key.recipient]);
        const opened = (await open(file)).get(ID);
        expect(opened).toEqual({ stringData: parse(sopsDecrypt(file, [key])).stringData });
        expect(opened).toEqual({ stringData: values });
      }),
      { numRuns: 25 },
    );
  }, 120_000);
});

function swapValues(text: string, a: string, b: string): string {
  const find = (k: string) => new RegExp(`^( +${k}: )(ENC\\[[^\\]]+\\])$`, "m").exec(text)?.[2] ?? "";
  const [va, vb] = [find(a), find(b)];
  return text.replace(va, "\u0000").replace(vb, va).replace("\u0000", vb);
}

describe("validation without keys", () => {
  it("reads an encrypted Secret, and renders only its digest", () => {
    expect(errors({ "apps/web/secret.yaml": encrypted })).toEqual([]);
    expect(describeModelContents(load({ "apps/web/secret.yaml": encrypted }))).toMatch(
      /, 1 encrypted Secret in \d+ files$/,
    );
    const render = renderFleet(modelOf({ "apps/web/secret.yaml": encrypted }), {
      secretDigestKey: new TextEncoder().encode("a-test-key-of-32-bytes-not-real!"),
    });
    const text = render.objects.find((o) => o.path.endsWith("core.Secret.db.yaml"))?.text ?? "";
    expect(text).toMatch(/secret-digest: "?hmac-sha256:/);
    expect(text).not.toContain("ENC[");
    expect(text).not.toContain("sops");
  });

  it.each([
    [
      "the whole document encrypted (sops's default)",
      () => sopsEncrypt(SECRET, [key.recipient], []),
      () =>
        "1:13: error: /apiVersion: the whole document is encrypted; gitfleet needs its apiVersion, kind and metadata to plan it",
    ],
    [
      "an annotation encrypted",
      () =>
        sopsEncrypt(
          SECRET.replace("  labels:", "  annotations:\n    owner: games\n  labels:"),
          [key.recipient],
          ["--encrypted-regex", "^(data|stringData|owner)$"],
        ),
      (t: string) =>
        `${lineOf(t, "        owner:")}:16: error: /metadata/annotations/owner: is encrypted; gitfleet needs everything but a Secret's data and stringData in the clear`,
    ],
    [
      "an encrypted ConfigMap",
      () =>
        sopsEncrypt(
          SECRET.replace("kind: Secret", "kind: ConfigMap")
            .replace("type: Opaque\n", "")
            .replace("stringData:", "binaryData:"),
          [key.recipient],
          ["--encrypted-regex", "^(data|binaryData)$"],
        ),
      (t: string) => `${lineOf(t, "sops:") + 1}:5: error: /sops: gitfleet decrypts only Secrets (v1)`,
    ],
    [
      "a value in the clear beside encrypted ones",
      () => encrypted.replace(/^data:\n/m, "data:\n    clear: Y2xlYXI=\n"),
      (t: string) =>
        `${lineOf(t, "    clear:")}:12: error: /data/clear: holds a value in the clear in an encrypted Secret`,
    ],
    [
      "a value that is no sops ciphertext",
      () => encrypted.replace(/(port: ENC\[AES256_GCM,data:[^,]*,iv:[^,]*,tag:)[^,]*/, "$1AAAA"),
      (t: string) =>
        `${lineOf(t, "    port:")}:11: error: /stringData/port: the value holds a tag that is not 16 bytes`,
    ],
    [
      "no age recipient",
      () => encrypted.replace(/ {4}age:\n(?: {8}.*\n| {12}.*\n)+/, ""),
      (t: string) => `${lineOf(t, "sops:") + 1}:5: error: /sops: the file names no age recipient`,
    ],
    [
      "key groups",
      () => encrypted.replace("    lastmodified:", "    key_groups:\n        - age: []\n    lastmodified:"),
      (t: string) =>
        `${lineOf(t, "        - age: []")}:9: error: /sops/key_groups: gitfleet decrypts files whose age recipients each hold the whole data key`,
    ],
  ])("refuses %s at its line, naming what to do", (_, make, expected) => {
    const text = make();
    const found = errors({ "apps/web/secret.yaml": text });
    expect(found).toHaveLength(1);
    expect(found[0]).toContain(`apps/web/secret.yaml:${expected(text)}`);
    expect(found[0]).toMatch(/\[SOPS_FORMAT\]$/);
  });

  it("refuses a file none of fleet.yaml's recipients opens, at its recipients", () => {
    const fleet = (recipients: readonly string[]) =>
      `apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata:\n  name: fleet\nspec:\n  sops:\n    ageRecipients: [${recipients.join(", ")}]\n`;
    const files = (recipients: readonly string[]) => ({
      "fleet.yaml": fleet(recipients),
      "apps/web/secret.yaml": encrypted,
    });
    expect(errors(files([key.recipient]))).toEqual([]);
    expect(errors(files([other.recipient, key.recipient]))).toEqual([]);
    expect(errors(files([other.recipient]))).toEqual([
      `apps/web/secret.yaml:${lineOf(encrypted, "        - enc:")}:9: error: /sops/age: encrypted to ${key.recipient}, none of which the fleet opens with (fleet.yaml spec.sops.ageRecipients): encrypt it to one of those (sops updatekeys) [SOPS_RECIPIENTS]`,
    ]);
  });
});

describe("in a plan", () => {
  it("names the keys a change touched, never a value: sops keeps an unchanged value's ciphertext", () => {
    const digestKey = new TextEncoder().encode("a-test-key-of-32-bytes-not-real!");
    const render = (text: string) =>
      renderFleet(modelOf({ "apps/web/secret.yaml": text }), { secretDigestKey: digestKey });
    const edited = sopsSet(encrypted, [key], '["stringData"]["password"]', "changed-test-only");
    const added = sopsSet(edited, [key], '["data"]["extra"]', Buffer.from("extra").toString("base64"));
    const plan = planChange(render(encrypted), render(added));
    const change = plan.clusters
      .find((c) => c.cluster === "east")
      ?.changed.find((c) => c.object === "Secret shop/db");
    expect(change?.secretKeys).toEqual({
      added: ["data.extra"],
      removed: [],
      changed: ["stringData.password"],
    });
    const text = formatPlanText(plan);
    expect(text).toContain(
      "~ Secret shop/db (Secret: values not shown; changed stringData.password; added data.extra)",
    );
    const markdown = formatPlanMarkdown(plan);
    expect(markdown).toContain("(Secret: values not shown; changed stringData.password; added data.extra)");
    for (const value of ["changed-test-only", "hunter2-test-only", Buffer.from("extra").toString("base64")])
      for (const surface of [text, markdown, JSON.stringify(plan)]) expect(surface).not.toContain(value);
    // Encrypted again from scratch, every ciphertext changes: every key reads as changed.
    const again = planChange(render(encrypted), render(sopsEncrypt(SECRET, [key.recipient])));
    expect(again.clusters[0]?.changed[0]?.secretKeys?.changed).toEqual([
      "data.token",
      "stringData.10",
      "stringData.password",
      "stringData.port",
    ]);
  });
});

describe("at sync", () => {
  it("applies the opened values, and reports a sealed Secret it could not open instead of applying it", async () => {
    const model = modelOf({ "apps/web/secret.yaml": encrypted });
    const objects = renderFleet(model, {}).objects;
    const secretIn = (desired: ReturnType<typeof desiredByCluster>) =>
      desired.get("east")?.find((d) => d.identity === ID);
    const opened = await openSecrets(model, SopsKeyring.fromKeyFile(ageKeyFile([key])));
    expect(secretIn(desiredByCluster(objects, model, opened))).toMatchObject({
      object: { stringData: { password: "hunter2-test-only" }, data: { token: TOKEN } },
    });
    expect(secretIn(desiredByCluster(objects, model, opened))?.error).toBeUndefined();
    expect(secretIn(desiredByCluster(objects, model))?.error).toBe(
      "apps/web/secret.yaml is encrypted with sops and this controller holds no age key (--sops-age-key-file)",
    );
    const wrong = await openSecrets(model, SopsKeyring.fromKeyFile(ageKeyFile([other])));
    expect(secretIn(desiredByCluster(objects, model, wrong))?.error).toMatch(
      /^apps\/web\/secret\.yaml cannot be decrypted: no age key this controller holds opens it/,
    );
  });

  it("reads age key files as age-keygen writes them, and refuses anything else naming the line", () => {
    expect(SopsKeyring.fromKeyFile(ageKeyFile([key, other])).size).toBe(2);
    expect(() => SopsKeyring.fromKeyFile("# only a comment\n")).toThrow("the file holds no age identity");
    expect(() => SopsKeyring.fromKeyFile(`${key.identity}\n${key.recipient}\n`)).toThrow(
      "line 2 is not an age identity (AGE-SECRET-KEY-1…)",
    );
  });
});
