import { describe, expect, it } from "vitest";
import { amzDate, authorization, sha256Hex, uriEncode } from "../../src/objectstore/sigv4.js";

// The worked examples AWS publishes for Signature Version 4, with its documented example key pairs
// (not credentials of anything).
const EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

describe("AWS Signature Version 4", () => {
  it("signs AWS's IAM example (GET ?Action=ListUsers&Version=2010-05-08) as published", () => {
    const header = authorization(
      {
        method: "GET",
        path: "/",
        query: [
          ["Version", "2010-05-08"],
          ["Action", "ListUsers"],
        ],
        headers: {
          "Content-Type": "application/x-www-form-urlencoded; charset=utf-8",
          Host: "iam.amazonaws.com",
          "X-Amz-Date": "20150830T123600Z",
        },
        payloadHash: EMPTY,
      },
      { region: "us-east-1", service: "iam", amzDate: "20150830T123600Z" },
      { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" },
    );
    expect(header).toBe(
      "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7",
    );
  });

  it("signs AWS's S3 GET Object example (a Range header, the empty payload's hash) as published", () => {
    const header = authorization(
      {
        method: "GET",
        path: "/test.txt",
        headers: {
          Host: "examplebucket.s3.amazonaws.com",
          Range: "bytes=0-9",
          "x-amz-content-sha256": EMPTY,
          "x-amz-date": "20130524T000000Z",
        },
        payloadHash: EMPTY,
      },
      { region: "us-east-1", service: "s3", amzDate: "20130524T000000Z" },
      { accessKeyId: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" },
    );
    expect(header).toBe(
      "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
    );
  });

  it.each([
    ["plain-name_1.~", false, "plain-name_1.~"],
    ["a b", false, "a%20b"],
    ["a/b", false, "a%2Fb"],
    ["a/b", true, "a/b"],
    ["ü+=", false, "%C3%BC%2B%3D"],
  ])("percent-encodes %j (keep '/': %s) as %j", (text, keepSlash, encoded) => {
    expect(uriEncode(text, keepSlash)).toBe(encoded);
  });

  it("writes x-amz-date without separators or milliseconds, and hashes as hex", () => {
    expect(amzDate(new Date("2015-08-30T12:36:00.123Z"))).toBe("20150830T123600Z");
    expect(sha256Hex("")).toBe(EMPTY);
  });
});
