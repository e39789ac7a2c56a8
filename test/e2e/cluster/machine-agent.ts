import { asMap } from "../../../src/apimachinery/json.js";
import { KUBELET_VERSION_ANNOTATION } from "../../../src/model/controlplane/node-pool-plan.js";
import { asNode, type JoinedNode } from "./joining-kubelet.js";

/**
 * What runs on a joined machine besides the test kubelet: it posts the Node's status as a kubelet
 * does (Ready, its kubelet version, a fresh heartbeat) with the node's own certificate, and follows the
 * kubelet version gitfleet tells it in the Node's gitfleet.io/kubelet-version annotation — reading
 * its own Node, as the Node authorizer lets it — by "upgrading" (reporting that version from its next
 * heartbeat on). Stopping it is a machine that stops reporting.
 */
export class MachineAgent {
  private timer: NodeJS.Timeout | undefined;
  private readySince = new Date().toISOString();
  /** Every version it was told, in order. */
  readonly upgrades: string[] = [];
  /** When its last heartbeat was taken by the API server (epoch ms; 0: none yet). */
  lastBeat = 0;
  /** Why its last heartbeat failed, when it did. */
  lastError: string | undefined;

  constructor(
    readonly node: JoinedNode,
    private version = node.kubeletVersion,
    private readonly heartbeatMs = 2_000,
  ) {}

  get kubeletVersion(): string {
    return this.version;
  }

  start(): this {
    const beat = () =>
      void this.beat().then(
        () => {
          this.lastBeat = Date.now();
          this.lastError = undefined;
        },
        (error: unknown) => {
          this.lastError = String(error);
        },
      );
    beat();
    this.timer = setInterval(beat, this.heartbeatMs);
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private async beat(): Promise<void> {
    const name = this.node.node;
    const live = await asNode(this.node, "GET", `/api/v1/nodes/${name}`);
    const told = asMap(asMap(live.metadata).annotations)[KUBELET_VERSION_ANNOTATION];
    if (typeof told === "string" && told !== this.version) {
      this.version = told;
      this.upgrades.push(told);
    }
    const now = new Date().toISOString();
    await asNode(this.node, "PATCH", `/api/v1/nodes/${name}/status`, {
      status: {
        nodeInfo: { kubeletVersion: this.version },
        conditions: [
          {
            type: "Ready",
            status: "True",
            reason: "KubeletReady",
            message: "kubelet is posting ready status",
            lastHeartbeatTime: now,
            lastTransitionTime: this.readySince,
          },
        ],
      },
    });
  }
}
