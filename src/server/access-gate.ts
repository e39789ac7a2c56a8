import type { IncomingMessage } from "node:http";
import type { FleetModel } from "../model/types.js";
import { accessOf, appTeams, maySeeApp, type Viewer } from "../model/viewers.js";
import type { ApiTokens } from "./api-tokens.js";

/** What a request may read: every app (the platform team, or an open server), or some teams' apps. */
export interface ApiScope {
  readonly viewer: string;
  readonly admin: boolean;
  seesApp(app: string): boolean;
  /** Plans render the whole fleet: the platform team's (and an open server's). */
  readonly mayPlan: boolean;
}

/** A scope that sees everything: a server without tokens, as before they existed. */
export const OPEN_SCOPE: ApiScope = { viewer: "anyone", admin: true, seesApp: () => true, mayPlan: true };

export interface AccessGateOptions {
  readonly tokens: ApiTokens;
  /** Anyone may read (never plan) without a token (--anonymous-read). */
  readonly anonymousRead: boolean;
  /** The fleet the owners are read from (the reconciler's model). */
  readonly model: () => Pick<FleetModel, "fleet" | "teams" | "apps"> | undefined;
}

/**
 * Who is asking the API: a bearer token (`--api-tokens-file`) acts as the owner names its line
 * gives, and sees what those owners own — every app for fleet.yaml's platformOwners, a team's apps
 * for its Team's owners, nothing else. A request without a token is refused (401) unless
 * anonymousRead, which lets it read everything and plan nothing.
 */
export class AccessGate {
  constructor(private readonly options: AccessGateOptions) {}

  /** The request's scope, or 401 when it must show a token. */
  scopeOf(request: IncomingMessage): ApiScope | 401 {
    const authorization = request.headers.authorization;
    const viewer = this.viewerOf(authorization);
    // A token that names nobody is refused, whether or not anyone may read.
    if (!viewer && authorization !== undefined) return 401;
    if (!viewer)
      return this.options.anonymousRead
        ? { viewer: "anonymous", admin: false, seesApp: () => true, mayPlan: false }
        : 401;
    const model = this.options.model();
    const access = model ? accessOf(model, viewer) : { admin: false, teams: [] };
    const owners = model ? this.ownersOf(model) : new Map<string, string>();
    return {
      viewer: viewer.subject,
      admin: access.admin,
      seesApp: (app) => maySeeApp(access, owners, app),
      mayPlan: access.admin,
    };
  }

  // Each app's team, worked out once per model the reconciler holds, not once per request.
  private readonly owners = new WeakMap<object, ReadonlyMap<string, string>>();
  private ownersOf(model: Pick<FleetModel, "teams" | "apps">): ReadonlyMap<string, string> {
    let owners = this.owners.get(model);
    if (!owners) {
      owners = appTeams(model);
      this.owners.set(model, owners);
    }
    return owners;
  }

  private viewerOf(authorization: string | undefined): Viewer | undefined {
    if (!authorization?.startsWith("Bearer ")) return undefined;
    return this.options.tokens.viewerOf(authorization.slice(7).trim());
  }
}
