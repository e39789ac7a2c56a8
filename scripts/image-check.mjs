#!/usr/bin/env node
// Checks the container image without a container engine: builds each stage's filesystem the way
// `docker build` does (COPY from the context or an earlier stage, RUN in WORKDIR — only the OS
// package install is left to the base image), then runs the final stage's exact ENTRYPOINT and CMD,
// with its ENV, as its USER, against the example fleet and simulated members, and checks what a
// person relies on: /readyz, /metrics, the JSON API, the dashboard, a clean stop on SIGTERM.
//
//   node scripts/image-check.mjs build            → prints the final stage's root directory
//   node scripts/image-check.mjs run <root>       → runs the image's command from it (use a private
//                                                   network namespace: it listens on 0.0.0.0:8080)
import { execFileSync, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const CONTEXT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** The Dockerfile's instructions by stage: continuation lines joined, comments dropped. */
function parseDockerfile(text) {
  const stages = [];
  const logical = text
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
  for (const line of logical) {
    const [, keyword, rest] = /^(\S+)\s+(.*)$/.exec(line) ?? [];
    const instruction = { keyword: keyword.toUpperCase(), rest };
    if (instruction.keyword === "FROM") {
      const [, image, alias] = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest);
      stages.push({ image, alias, instructions: [] });
    } else stages.at(-1).instructions.push(instruction);
  }
  return stages;
}

// What each instruction does to the stage being built; EXPOSE, HEALTHCHECK and LABEL lay down nothing.
const INSTRUCTIONS = {
  WORKDIR(image, rest) {
    image.workdir = rest;
    mkdirSync(inStage(image, rest), { recursive: true });
  },
  COPY(image, rest, roots) {
    const from = /^--from=(\S+)\s+/.exec(rest);
    const parts = rest.replace(/^--\S+\s+/, "").split(/\s+/);
    const dest = parts.pop();
    const source = from ? roots.get(from[1]) : CONTEXT;
    if (!source) throw new Error(`COPY --from=${from[1]}: no such stage`);
    for (const part of parts) {
      if (!existsSync(join(source, part)))
        throw new Error(`COPY ${part}: not in ${from ? `stage ${from[1]}` : "the build context"}`);
      const into = dest.endsWith("/") || parts.length > 1;
      cpSync(
        join(source, part),
        into ? join(inStage(image, dest), part.split("/").pop()) : inStage(image, dest),
        {
          recursive: true,
        },
      );
    }
  },
  RUN(image, rest) {
    // The OS packages come with the base image here (this machine has openssh-client).
    if (/apt-get/.test(rest))
      return console.error(`image-check: left to the base image: RUN ${rest.slice(0, 60)}…`);
    console.error(`image-check: RUN ${rest}`);
    execFileSync("sh", ["-c", rest], {
      cwd: inStage(image, image.workdir),
      stdio: ["ignore", 2, 2],
      env: { ...process.env, ...image.env },
    });
  },
  ENV(image, rest) {
    for (const [, k, v] of rest.matchAll(/(\w+)=("[^"]*"|\S+)/g)) image.env[k] = v.replace(/^"|"$/g, "");
  },
  USER(image, rest) {
    image.user = rest;
  },
  ENTRYPOINT(image, rest) {
    image.entrypoint = JSON.parse(rest);
  },
  CMD(image, rest) {
    image.cmd = JSON.parse(rest);
  },
};

function inStage(image, path) {
  return join(image.root, path.startsWith("/") ? path : join(image.workdir, path));
}

function build() {
  const stages = parseDockerfile(readFileSync(join(CONTEXT, "Dockerfile"), "utf8"));
  const roots = new Map();
  let image;
  for (const stage of stages) {
    const root = mkdtempSync(join(tmpdir(), `gitfleet-image-${stage.alias ?? "final"}-`));
    chmodSync(root, 0o755);
    image = { root, base: stage.image, workdir: "/", env: {}, user: "0:0", entrypoint: [], cmd: [] };
    for (const { keyword, rest } of stage.instructions) INSTRUCTIONS[keyword]?.(image, rest, roots);
    roots.set(stage.alias, root);
  }
  writeFileSync(join(image.root, ".image.json"), JSON.stringify(image, null, 2));
  process.stdout.write(`${image.root}\n`);
}

async function until(probe, ms, what) {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe().catch((error) => {
      if (error.fatal) throw error;
    });
    if (value) return value;
    if (Date.now() > end) throw new Error(`image-check: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function chownTree(path, uid, gid) {
  chownSync(path, uid, gid);
  if (statSync(path).isDirectory())
    for (const entry of readdirSync(path)) chownTree(join(path, entry), uid, gid);
}

// The example fleet as a Git repository (mounted where GITFLEET_REPO points) and simulated members
// beside the container, their kubeconfig mounted read-only where the image's KUBECONFIG says.
async function surroundings(image, uid, gid) {
  const work = mkdtempSync(join(tmpdir(), "gitfleet-image-run-"));
  const fleet = join(work, "fleet");
  cpSync(join(CONTEXT, "example-repo"), fleet, { recursive: true });
  const git = (...args) =>
    execFileSync("git", ["-c", "user.name=Pat Platform", "-c", "user.email=pat@example.com", ...args], {
      cwd: fleet,
      stdio: "ignore",
    });
  git("init", "-q", "-b", "main");
  git("add", "-A");
  git("commit", "-q", "-m", "Initial fleet");
  const simulate = ["simulate", "--from-repo", fleet, "--kubeconfig-out", join(work, "kubeconfig")];
  const profile = ["--profile", join(CONTEXT, "example-simulation.yaml")];
  const members = spawn(process.execPath, [join(CONTEXT, "bin/gitfleet.js"), ...simulate, ...profile], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  await until(async () => existsSync(join(work, "kubeconfig")), 30_000, "the simulated members");
  const kubeconfig = join(image.root, image.env.KUBECONFIG);
  mkdirSync(dirname(kubeconfig), { recursive: true });
  cpSync(join(work, "kubeconfig"), kubeconfig);
  chmodSync(kubeconfig, 0o444);
  chmodSync(work, 0o755);
  chownTree(fleet, uid, gid);
  const home = join(image.root, image.env.HOME ?? "/home/node");
  mkdirSync(home, { recursive: true });
  chownTree(home, uid, gid);
  // An automation token for the checks, its hash in a tokens file the controller reads.
  const token = randomBytes(24).toString("hex");
  const tokens = join(work, "api-tokens");
  writeFileSync(
    tokens,
    `image-check @example-shop/platform sha256:${createHash("sha256").update(token).digest("hex")}\n`,
  );
  chmodSync(tokens, 0o444);
  return { fleet, kubeconfig, members, token, tokens };
}

// Starts the image's exact ENTRYPOINT + CMD with its ENV (paths inside the image mapped to its root).
function start(image, uid, gid, { fleet, kubeconfig, tokens }) {
  const inImage = (path) => join(image.root, path);
  const env = {
    PATH: process.env.PATH,
    ...Object.fromEntries(Object.entries(image.env).map(([k, v]) => [k, v.startsWith("/") ? inImage(v) : v])),
    GITFLEET_REPO: fleet,
    // The API and dashboard answer a listen on every address only to someone: an automation token.
    GITFLEET_API_TOKENS_FILE: tokens,
    // example-repo's idc-west-1 names its kubeconfig by this variable.
    GITFLEET_KUBECONFIG_IDC_WEST_1: kubeconfig,
  };
  const exact = [...image.entrypoint, ...image.cmd];
  const node = nodeOf(image.base);
  const command = exact.map((arg, i) =>
    i === 0 && arg === "node" ? node : arg.startsWith("/") && existsSync(inImage(arg)) ? inImage(arg) : arg,
  );
  console.error(`image-check: as ${uid}:${gid}: ${exact.join(" ")}`);
  const asUser =
    process.getuid?.() === 0 ? ["setpriv", `--reuid=${uid}`, `--regid=${gid}`, "--clear-groups", "--"] : [];
  const [program, ...args] = [...asUser, ...command];
  const child = spawn(program, args, {
    cwd: inImage(image.workdir),
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  const state = { log: "", early: undefined };
  child.stderr.on("data", (chunk) => {
    state.log += chunk;
  });
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  exited.then(
    ({ code, signal }) => {
      state.early = `${exact.join(" ")} exited (${code ?? signal})`;
    },
    () => {},
  );
  return { child, exited, state };
}

// What a person relies on: ready, the right user, metrics, the API, the dashboard, a clean stop.
async function check(image, uid, { child, exited, state }, token) {
  const asked = { headers: { authorization: `Bearer ${token}` } };
  const listen = image.cmd[image.cmd.indexOf("--listen") + 1];
  const base = `http://127.0.0.1:${listen.split(":").pop()}`;
  await until(
    async () => {
      if (state.early) throw Object.assign(new Error(`image-check: ${state.early}`), { fatal: true });
      return (await fetch(`${base}/readyz`)).status === 200;
    },
    60_000,
    "/readyz",
  );
  const processUid = readFileSync(`/proc/${child.pid}/status`, "utf8").match(/^Uid:\s+(\d+)/m)?.[1];
  if (Number(processUid) !== uid)
    throw new Error(`image-check: the controller runs as uid ${processUid}, not ${uid}`);
  const metrics = await (await fetch(`${base}/metrics`)).text();
  if (!/^gitfleet_ready 1$/m.test(metrics))
    throw new Error("image-check: /metrics does not say gitfleet_ready 1");
  const clusters = await until(
    async () => {
      const body = await (await fetch(`${base}/api/clusters`, asked)).json();
      return body.clusters.some((c) => c.synced?.reachable) ? body.clusters : undefined;
    },
    60_000,
    "a synced cluster in /api/clusters",
  );
  if ((await fetch(`${base}/api/clusters`)).status !== 401 || (await fetch(`${base}/`)).status !== 401)
    throw new Error("image-check: the API or the dashboard answers a request that shows no token");
  const html = await (await fetch(`${base}/`, asked)).text();
  const script = /<script type="module"[^>]*src="([^"]+)"/.exec(html)?.[1];
  if (!script || (await fetch(`${base}${script}`, asked)).status !== 200)
    throw new Error("image-check: the dashboard's assets are not served");
  child.kill("SIGTERM");
  const timeout = new Promise((resolve) => setTimeout(() => resolve({ code: "a timeout" }), 15_000));
  const { code, signal } = await Promise.race([exited, timeout]);
  if (code !== 0)
    throw new Error(`image-check: gitfleet run did not stop cleanly on SIGTERM (${code ?? signal})`);
  return `ready, uid ${uid}, ${clusters.length} clusters in /api/clusters for a token (401 without one), dashboard served, stopped cleanly on SIGTERM`;
}

// The Node.js the image's base ships (node:24-bookworm-slim: 24), as the npm registry publishes it
// (scripts/node-binary.sh), so the image's command runs on the image's runtime, not this machine's.
function nodeOf(base) {
  const major = /^node:(\d+)/.exec(base ?? "")?.[1];
  if (!major) throw new Error(`image-check: the final stage is ${base}, not a node:<major> image`);
  if (process.versions.node.split(".")[0] === major) return process.execPath;
  const binary = execFileSync("bash", [join(CONTEXT, "scripts/node-binary.sh"), major], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  })
    .trim()
    .split("\n")
    .pop();
  console.error(
    `image-check: ${base} runs Node.js ${execFileSync(binary, ["--version"], { encoding: "utf8" }).trim()}`,
  );
  return binary;
}

async function run(root) {
  const image = JSON.parse(readFileSync(join(root, ".image.json"), "utf8"));
  const [uid, gid] = image.user.split(":").map(Number);
  if (!(uid > 0)) throw new Error(`image-check: the image runs as user ${image.user}, not a non-root uid`);
  const around = await surroundings(image, uid, gid);
  const running = start(image, uid, gid, around);
  try {
    console.error(`image-check: ok — ${await check(image, uid, running, around.token)}`);
  } catch (error) {
    console.error(running.state.log.split("\n").slice(-20).join("\n"));
    throw error;
  } finally {
    running.child.kill("SIGKILL");
    around.members.kill("SIGTERM");
  }
}

const [mode, root] = process.argv.slice(2);
if (mode === "build") build();
else if (mode === "run" && root) await run(root);
else {
  console.error("usage: image-check.mjs build | run <root>");
  process.exit(64);
}
