import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, freePorts } from "../../helpers/free-port.js";

/**
 * Real Kubernetes control planes on 127.0.0.1, started the way envtest and Kubernetes' integration
 * tests start them: one etcd shared by every cluster (each API server under its own --etcd-prefix),
 * and per cluster a kube-apiserver with generated certificates, a kube-controller-manager running
 * the controllers workloads need, and a kube-scheduler. One kubeconfig holds a context per cluster
 * (each with its own user, as client-node caches credentials by user name). Every process is a
 * child of this one and is stopped by PID.
 */

export interface ControlPlane {
  readonly name: string;
  readonly server: string;
  readonly dir: string;
  /** Stops this cluster's API server (as when a cluster goes down); `start` brings it back on the same port. */
  stopApiServer(): Promise<void>;
  startApiServer(): Promise<void>;
}

export interface ControlPlanes {
  readonly clusters: readonly ControlPlane[];
  /** One kubeconfig, a context per cluster named after it. */
  readonly kubeconfig: string;
  readonly runDir: string;
  /** PIDs of every process started, for the "nothing left behind" check. */
  pids(): number[];
  stop(): Promise<void>;
}

/** The KCM controllers workloads need (names as kube-controller-manager --controllers takes them). */
const CONTROLLERS = [
  "deployment-controller",
  "replicaset-controller",
  "statefulset-controller",
  "job-controller",
  "cronjob-controller",
  "namespace-controller",
  "garbage-collector-controller",
  "node-lifecycle-controller",
  "pod-garbage-collector-controller",
  // Binds claims to the volumes a provisioner made (the process runtime's, for hosted etcds).
  "persistentvolume-binder-controller",
  // Lets a claim deleted under a pod go once the pod is gone (an etcd member replaced onto a new volume).
  "persistentvolumeclaim-protection-controller",
  // Counts what each namespace uses against its ResourceQuotas (gitfleet renders them from fleet quotas).
  "resourcequota-controller",
];

const READY_TIMEOUT_MS = 180_000;

export async function startControlPlanes(options: {
  readonly binDir: string;
  readonly names: readonly string[];
  readonly runDir?: string;
  /** Start controller-managers and schedulers (default true); false: API servers alone. */
  readonly controllers?: boolean;
}): Promise<ControlPlanes> {
  const base = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
  removeStaleRuns(base);
  const runDir = options.runDir ?? join(base, `gitfleet-e2e-${process.pid}`);
  rmSync(runDir, { recursive: true, force: true });
  mkdirSync(runDir, { recursive: true });
  const processes = new Set<ChildProcess>();
  const children: ChildProcess[] = [];
  const launch = (name: string, args: string[], log: string, env: NodeJS.ProcessEnv = {}): ChildProcess => {
    const out = openSync(log, "a");
    // setpriv --pdeathsig: the kernel kills the child when this process dies, however it dies, so a
    // killed test run leaves no control plane behind.
    const child = spawn("setpriv", ["--pdeathsig", "KILL", "--", join(options.binDir, name), ...args], {
      stdio: ["ignore", out, out],
      env: { ...process.env, GOMEMLIMIT: "600MiB", ...env },
    });
    processes.add(child);
    children.push(child);
    child.on("exit", () => processes.delete(child));
    return child;
  };
  const killAll = () => {
    for (const child of processes) child.kill("SIGKILL");
  };
  process.once("exit", killAll);
  try {
    const etcdUrl = await startOrRetry("etcd", join(runDir, "etcd.log"), async () => {
      const [etcdPort, peerPort] = await freePorts(2);
      const url = `http://127.0.0.1:${etcdPort}`;
      rmSync(join(runDir, "etcd"), { recursive: true, force: true });
      const child = launch(
        "etcd",
        [
          "--name=e2e",
          `--data-dir=${join(runDir, "etcd")}`,
          `--listen-client-urls=${url}`,
          `--advertise-client-urls=${url}`,
          `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
          `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
          `--initial-cluster=e2e=http://127.0.0.1:${peerPort}`,
          "--unsafe-no-fsync=true",
          "--log-level=warn",
          "--quota-backend-bytes=2147483648",
        ],
        join(runDir, "etcd.log"),
      );
      await until(`etcd at ${url}`, async () => (await fetch(`${url}/health`)).ok, 60_000, child);
      return url;
    });
    const clusters: ControlPlane[] = [];
    const users: KubeconfigEntry[] = [];
    // One after another: each API server burns a core for a while at start.
    for (const name of options.names) {
      const dir = join(runDir, name);
      mkdirSync(join(dir, "pki"), { recursive: true });
      const pki = writePki(join(dir, "pki"));
      const apiArgsFor = (port: number, server: string) => [
        `--etcd-servers=${etcdUrl}`,
        `--etcd-prefix=/c-${name}/registry`,
        "--bind-address=127.0.0.1",
        "--advertise-address=127.0.0.1",
        `--secure-port=${port}`,
        `--cert-dir=${join(dir, "pki")}`,
        `--tls-cert-file=${pki.serverCert}`,
        `--tls-private-key-file=${pki.serverKey}`,
        `--client-ca-file=${pki.clientCa}`,
        `--service-account-issuer=${server}`,
        `--service-account-key-file=${pki.saPub}`,
        `--service-account-signing-key-file=${pki.saKey}`,
        // Room for thousands of Services (the peer comparison applies 1,000 per cluster).
        "--service-cluster-ip-range=10.0.0.0/16",
        "--authorization-mode=RBAC",
        "--disable-admission-plugins=ServiceAccount",
        "--allow-privileged=true",
        "--endpoint-reconciler-type=none",
        "--profiling=false",
        "--enable-priority-and-fairness=false",
        "--max-requests-inflight=0",
        "--max-mutating-requests-inflight=0",
        "--event-ttl=15m",
        "--v=1",
      ];
      const started = await startOrRetry(
        `kube-apiserver of ${name}`,
        join(dir, "apiserver.log"),
        async () => {
          const port = await freePort();
          const server = `https://127.0.0.1:${port}`;
          const args = apiArgsFor(port, server);
          const child = launch("kube-apiserver", args, join(dir, "apiserver.log"));
          await waitReady(server, pki.serverCa, `kube-apiserver of ${name}`, child);
          return { server, args, child };
        },
      );
      const { server, args: apiArgs } = started;
      let apiServer = started.child;
      const entry: KubeconfigEntry = {
        name,
        server,
        ca: pki.serverCa,
        cert: pki.adminCert,
        key: pki.adminKey,
      };
      users.push(entry);
      const own = join(dir, "admin.kubeconfig");
      writeFileSync(own, kubeconfigText([entry]));
      if (options.controllers !== false) {
        launch(
          "kube-controller-manager",
          [
            `--kubeconfig=${own}`,
            `--authentication-kubeconfig=${own}`,
            `--authorization-kubeconfig=${own}`,
            `--controllers=${CONTROLLERS.join(",")}`,
            "--leader-elect=false",
            "--secure-port=0",
            "--profiling=false",
            "--kube-api-qps=200",
            "--kube-api-burst=400",
            "--node-monitor-grace-period=20s",
            "--v=1",
          ],
          join(dir, "controller-manager.log"),
        );
        launch(
          "kube-scheduler",
          [
            `--kubeconfig=${own}`,
            `--authentication-kubeconfig=${own}`,
            `--authorization-kubeconfig=${own}`,
            "--leader-elect=false",
            "--bind-address=127.0.0.1",
            `--secure-port=${await freePort()}`,
            "--profiling=false",
            "--v=1",
          ],
          join(dir, "scheduler.log"),
        );
      }
      clusters.push({
        name,
        server,
        dir,
        stopApiServer: async () => {
          const stopped = new Promise((resolve) => apiServer.once("exit", resolve));
          apiServer.kill("SIGKILL");
          await stopped;
        },
        startApiServer: async () => {
          apiServer = launch("kube-apiserver", apiArgs, join(dir, "apiserver.log"));
          await waitReady(server, pki.serverCa, `kube-apiserver of ${name}`, apiServer);
        },
      });
    }
    const kubeconfig = join(runDir, "kubeconfig");
    writeFileSync(kubeconfig, kubeconfigText(users));
    return {
      clusters,
      kubeconfig,
      runDir,
      pids: () => children.map((c) => c.pid ?? 0).filter((pid) => pid > 0),
      stop: async () => {
        process.removeListener("exit", killAll);
        await stopAll(processes);
        rmSync(runDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    killAll();
    throw error;
  }
}

// A run that was killed leaves its directory (on tmpfs: memory): those of processes gone are removed.
function removeStaleRuns(base: string): void {
  for (const entry of readdirSync(base)) {
    const pid = /^gitfleet-e2e-(\d+)$/.exec(entry)?.[1];
    if (!pid) continue;
    try {
      process.kill(Number(pid), 0);
    } catch {
      rmSync(join(base, entry), { recursive: true, force: true });
    }
  }
}

// SIGTERM, then SIGKILL what is still running after 5 s.
async function stopAll(processes: Set<ChildProcess>): Promise<void> {
  const running = [...processes];
  const exited = running.map((child) => new Promise((resolve) => child.once("exit", resolve)));
  for (const child of running) child.kill("SIGTERM");
  const timer = setTimeout(() => {
    for (const child of processes) child.kill("SIGKILL");
  }, 5_000);
  await Promise.all(exited);
  clearTimeout(timer);
}

interface Pki {
  readonly serverCa: string;
  readonly serverCert: string;
  readonly serverKey: string;
  readonly clientCa: string;
  readonly adminCert: string;
  readonly adminKey: string;
  readonly saKey: string;
  readonly saPub: string;
}

// Throw-away certificates, as envtest's tiny CA makes them: a serving CA and certificate for
// 127.0.0.1/localhost, a client CA and an admin client certificate in system:masters, and the
// service-account signing key pair. Debian's openssl makes them (Node cannot write X.509).
function writePki(dir: string): Pki {
  const ssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  const ecKey = (name: string) =>
    ssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", `${name}.key`);
  const ca = (name: string) => {
    ecKey(name);
    ssl(
      "req",
      "-x509",
      "-new",
      "-key",
      `${name}.key`,
      "-subj",
      `/CN=${name}`,
      "-days",
      "7",
      "-addext",
      "basicConstraints=critical,CA:TRUE",
      "-addext",
      "keyUsage=critical,keyCertSign,cRLSign",
      "-out",
      `${name}.crt`,
    );
  };
  const leaf = (name: string, subject: string, issuer: string, extensions: string) => {
    ecKey(name);
    ssl("req", "-new", "-key", `${name}.key`, "-subj", subject, "-out", `${name}.csr`);
    writeFileSync(join(dir, `${name}.ext`), extensions);
    ssl(
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      `${issuer}.crt`,
      "-CAkey",
      `${issuer}.key`,
      "-CAcreateserial",
      "-days",
      "7",
      "-extfile",
      `${name}.ext`,
      "-out",
      `${name}.crt`,
    );
  };
  ca("serving-ca");
  leaf(
    "apiserver",
    "/CN=kube-apiserver",
    "serving-ca",
    "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature\n",
  );
  ca("client-ca");
  leaf(
    "admin",
    "/O=system:masters/CN=gitfleet-e2e-admin",
    "client-ca",
    "extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature\n",
  );
  ssl("genrsa", "-out", "sa.key", "2048");
  ssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub");
  const at = (file: string) => join(dir, file);
  return {
    serverCa: at("serving-ca.crt"),
    serverCert: at("apiserver.crt"),
    serverKey: at("apiserver.key"),
    clientCa: at("client-ca.crt"),
    adminCert: at("admin.crt"),
    adminKey: at("admin.key"),
    saKey: at("sa.key"),
    saPub: at("sa.pub"),
  };
}

interface KubeconfigEntry {
  readonly name: string;
  readonly server: string;
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

function kubeconfigText(entries: readonly KubeconfigEntry[]): string {
  const b64 = (file: string) => readFileSync(file).toString("base64");
  return JSON.stringify(
    {
      apiVersion: "v1",
      kind: "Config",
      clusters: entries.map((e) => ({
        name: e.name,
        cluster: { server: e.server, "certificate-authority-data": b64(e.ca) },
      })),
      users: entries.map((e) => ({
        name: `${e.name}-admin`,
        user: { "client-certificate-data": b64(e.cert), "client-key-data": b64(e.key) },
      })),
      contexts: entries.map((e) => ({ name: e.name, context: { cluster: e.name, user: `${e.name}-admin` } })),
      "current-context": entries[0]?.name ?? "",
    },
    null,
    2,
  );
}

// /readyz answers anonymous requests (system:public-info-viewer).
async function waitReady(server: string, caFile: string, what: string, child: ChildProcess): Promise<void> {
  const ca = readFileSync(caFile);
  await until(
    what,
    () =>
      new Promise<boolean>((resolve) => {
        const req = request(`${server}/readyz`, { ca, timeout: 2_000 }, (res) => {
          res.resume();
          resolve(res.statusCode === 200);
        });
        req.on("error", () => resolve(false));
        req.on("timeout", () => {
          req.destroy();
          resolve(false);
        });
        req.end();
      }),
    READY_TIMEOUT_MS,
    child,
  );
}

/** A server that exited before it was ready: it will never be, and its log says why. */
class ExitedEarly extends Error {}

async function until(
  what: string,
  probe: () => Promise<boolean>,
  timeoutMs: number,
  child: ChildProcess,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe().catch(() => false)) return;
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new ExitedEarly(`${what} exited (${child.exitCode ?? child.signalCode}) before it was ready`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${what} was not ready within ${timeoutMs / 1000} s`);
}

/**
 * Starts a server on ports chosen by `start`. A port free a moment ago can be taken by another
 * process before the server binds it; a server that exits before it is ready is started again on
 * fresh ports, three times at most, and the error carries the end of its log.
 */
async function startOrRetry<T>(what: string, log: string, start: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (error) {
      const tail = existsSync(log) ? readFileSync(log, "utf8").split("\n").slice(-15).join("\n") : "(no log)";
      if (!(error instanceof ExitedEarly) || attempt === 3) {
        throw new Error(`${(error as Error).message}; the end of ${log}:\n${tail}`);
      }
      console.warn(`${what}: ${error.message}, started again on fresh ports; the end of its log:\n${tail}`);
    }
  }
}

export { freePort };
