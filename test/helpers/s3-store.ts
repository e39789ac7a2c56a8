import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createInterface } from "node:readline";
import type { AccessKey } from "../../src/objectstore/sigv4.js";
import { builtBinary } from "./built-binary.js";

/** The tests' S3-compatible store, built from Go modules by scripts/build-s3-store.sh (cached). */
export function s3StoreBinary(): string {
  return builtBinary("build-s3-store.sh");
}

/** A running store: its endpoint, its one bucket, the one key pair it takes. */
export interface RunningStore {
  readonly endpoint: URL;
  readonly bucket: string;
  readonly key: AccessKey;
  readonly process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts the store on 127.0.0.1 with a fresh random key pair (made for this run, valid nowhere else)
 * and one bucket, in memory: its objects last as long as its process.
 */
export async function startS3Store(bucket = "fleet-backups", listen = "127.0.0.1:0"): Promise<RunningStore> {
  const key = {
    accessKeyId: `TEST${randomBytes(8).toString("hex").toUpperCase()}`,
    secretAccessKey: randomBytes(24).toString("base64url"),
  };
  const child = spawn(s3StoreBinary(), ["--listen", listen, "--bucket", bucket], {
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH ?? "",
      S3_ACCESS_KEY_ID: key.accessKeyId,
      S3_SECRET_ACCESS_KEY: key.secretAccessKey,
    },
  });
  child.stderr?.resume();
  const address = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.once("line", (line) => resolve(line.trim()));
    child.once("exit", (code) => reject(new Error(`the S3 store exited (${code}) before it listened`)));
  });
  return {
    endpoint: new URL(`http://${address}`),
    bucket,
    key,
    process: child,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    },
  };
}
