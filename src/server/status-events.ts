import type { ServerResponse } from "node:http";

/**
 * Server-sent events for the dashboard: `status` with the new status commit whenever the status
 * branch moves (checked every second and after every reconcile), and a comment every 15 s so
 * proxies keep the stream open. A browser's EventSource reconnects by itself. At most `maxClients`
 * streams are open at once; more are turned away (503), so streams cannot take every file
 * descriptor the controller needs for Git and its members.
 */
export class StatusEvents {
  private readonly clients = new Set<ServerResponse>();
  private last: string | undefined;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly tip: () => Promise<string | undefined>,
    pollMs = 1000,
    private readonly maxClients = 100,
  ) {
    const poll = setInterval(() => void this.check(), pollMs);
    const keepAlive = setInterval(() => this.write(": keep-alive\n\n"), 15_000);
    poll.unref();
    keepAlive.unref();
    this.timers.push(poll, keepAlive);
  }

  /** Adds a client: it gets the current status commit at once, then every change. */
  async subscribe(response: ServerResponse): Promise<void> {
    if (this.clients.size >= this.maxClients) {
      response
        .writeHead(503, { "content-type": "text/plain; charset=utf-8", "retry-after": "10" })
        .end("too many live-update streams are open; try again later\n");
      return;
    }
    response.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    this.clients.add(response);
    response.on("close", () => this.clients.delete(response));
    // The newcomer's answer only: the others hear of a change when check() sees one.
    response.write(event(await this.tip()));
  }

  /** Looks at the status branch now (after a reconcile). */
  async check(): Promise<void> {
    if (this.clients.size === 0) return;
    const tip = await this.tip().catch(() => undefined);
    if (tip === this.last) return;
    this.last = tip;
    this.write(event(tip));
  }

  close(): void {
    for (const timer of this.timers) clearInterval(timer);
    for (const client of this.clients) client.end();
    this.clients.clear();
  }

  private write(text: string): void {
    for (const client of this.clients) client.write(text);
  }
}

function event(commit: string | undefined): string {
  return `event: status\ndata: ${JSON.stringify({ statusCommit: commit ?? null })}\n\n`;
}
