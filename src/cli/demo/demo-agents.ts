import { join } from "node:path";
import type { Logger } from "pino";
import { Agent } from "../../agent/agent.js";
import { commitSigner } from "../../git/commit-signer.js";
import { type CommitVerifier, commitVerifier } from "../../git/commit-verifier.js";
import { FleetRepo } from "../../git/fleet-repo.js";
import { MemberClient } from "../../kube/member-client.js";
import type { FleetModel } from "../../model/types.js";
import { memberClientConfig } from "../../sim/kubeconfig.js";
import type { SimulatedMember } from "../../sim/member-server.js";
import { runProgram } from "../../util/run-program.js";

// An agent per pull-mode cluster, each round on the interval; a committed report asks the controller to fold it in.
export async function startAgents(
  model: FleetModel,
  members: readonly SimulatedMember[],
  repoDir: string,
  options: { logger: Logger; intervalMs: number; verify: CommitVerifier | undefined },
  reported: () => void,
): Promise<{ stop: () => Promise<void> }> {
  const { logger, intervalMs, verify } = options;
  const agents: Agent[] = [];
  // Without a signing key (no ssh-keygen here) there is nothing an agent may trust: none runs.
  const pull = verify ? model.clusters.filter((c) => c.spec.connection?.mode === "pull") : [];
  for (const cluster of pull) {
    const member = members.find((m) => m.name === cluster.metadata.name);
    if (!member) continue;
    agents.push(
      new Agent({
        repo: await FleetRepo.open({ location: repoDir }),
        cluster: member.name,
        branch: "main",
        statusBranch: "gitfleet/status",
        client: new MemberClient(member.name, memberClientConfig(member)),
        logger,
        author: { name: "gitfleet agent", email: `gitfleet-agent@${member.name}` },
        push: true,
        verify: verify as CommitVerifier,
      }),
    );
  }
  let running: Promise<void> = Promise.resolve();
  const tick = () => {
    running = running.then(async () => {
      for (const agent of agents) {
        await agent.heartbeat().catch(() => undefined);
        const round = await agent.round().catch(() => undefined);
        if (round?.report === "committed") reported();
      }
    });
  };
  const timer = setInterval(tick, Math.min(intervalMs, 2000));
  tick();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}

// An SSH key made for this demo (ssh-keygen, in its directory): it signs the status commits, and its
// public half is what the agent and a restarted controller trust. Undefined without ssh-keygen.
export async function demoSigningKey(
  dir: string,
): Promise<{ sign: (payload: string) => Promise<string>; verify: CommitVerifier } | undefined> {
  const key = join(dir, "signing-key");
  const made = await runProgram(
    "ssh-keygen",
    ["-q", "-t", "ed25519", "-N", "", "-C", "gitfleet-demo", "-f", key],
    "",
  ).catch(() => undefined);
  if (made?.code !== 0) return undefined;
  const verify = await commitVerifier({ signingKey: { format: "ssh", key } });
  return verify ? { sign: commitSigner("ssh", key), verify } : undefined;
}
