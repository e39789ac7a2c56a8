import type { IncomingMessage } from "node:http";
import type { FleetModel } from "../model/types.js";
import { accessOf, appTeams, maySeeApp, type Viewer } from "../model/viewers.js";
import type { ApiTokens } from "./api-tokens.js";
import type { SignIn } from "./sign-in.js";

/** What a request may read: every app (the platform team, or an open server), or some teams' apps. */
export interface ApiScope {
  readonly viewer: string;
  /** How the request was let in: a bearer token, a person's session, anonymous reading, or an open server. */
  readonly via: "token" | "session" | "anonymous" | "open";
  readonly admin: boolean;
  /** The teams whose owners name the viewer. */
  readonly teams: readonly string[];
  seesApp(app: string): boolean;
  /** The platform team (and an open server) plans everything, a team's member their teams' apps. */
  readonly mayPlan: boolean;
}

/** A scope that sees everything: a server without tokens, as before they existed. */
export const OPEN_SCOPE: ApiScope = {
  viewer: "anyone",
  via: "open",
  admin: true,
  teams: [],
  seesApp: () => true,
  mayPlan: true,
};

export interface AccessGateOptions {
  /** Automation's bearer tokens (--api-tokens-file). */
  readonly tokens?: ApiTokens;
  /** People signing in with OpenID Connect (--oidc-issuer). */
  readonly signIn?: SignIn;
  /** Anyone may read (never plan) without a token (--anonymous-read). */
  readonly anonymousRead: boolean;
  /** The fleet the owners are read from (the reconciler's model). */
  readonly model: () => Pick<FleetModel, "fleet" | "teams" | "apps"> | undefined;
}

/**
 * Who is asking the API and the dashboard: a bearer token (`--api-tokens-file`) or a person's session
 * (signed in with OpenID Connect) acts as the owner names it carries, and sees what those owners own —
 * every app for fleet.yaml's platformOwners, a team's apps for its Team's owners, nothing else. A
 * request with neither is refused (401) unless anonymousRead, which lets it read everything and plan
 * nothing. A gate with no way in at all refuses everyone: the operator must choose one.
 */
export class AccessGate {
  constructor(private readonly options: AccessGateOptions) {}

  /** Sign-in for people, when the operator configured it. */
  get signIn(): SignIn | undefined {
    return this.options.signIn;
  }

  /** The request's scope, or 401 when it must show who it is. */
  scopeOf(request: IncomingMessage): ApiScope | 401 {
    const authorization = request.headers.authorization;
    // A token that names nobody is refused, whatever else the request carries.
    if (authorization !== undefined) {
      const viewer = this.tokenViewer(authorization);
      return viewer ? this.scopeFor(viewer, "token") : 401;
    }
    const person = this.options.signIn?.viewerOf(request);
    if (person) return this.scopeFor(person, "session");
    return this.options.anonymousRead
      ? {
          viewer: "anonymous",
          via: "anonymous",
          admin: false,
          teams: [],
          seesApp: () => true,
          mayPlan: false,
        }
      : 401;
  }

  /** What a refused request is told: the ways in this gate has. */
  refusal(): string {
    const ways = [
      ...(this.options.signIn ? ["sign in at /auth/login"] : []),
      ...(this.options.tokens ? ["show a bearer token (Authorization: Bearer …)"] : []),
    ];
    return ways.length > 0
      ? `who is asking? ${ways.join(", or ")}`
      : "this controller lets nobody in: its operator has set neither --oidc-issuer, --api-tokens-file nor --anonymous-read";
  }

  private scopeFor(viewer: Viewer, via: "token" | "session"): ApiScope {
    const model = this.options.model();
    const access = model ? accessOf(model, viewer) : { admin: false, teams: [] };
    const owners = model ? this.ownersOf(model) : new Map<string, string>();
    return {
      // A person by the first name their provider gave (@user), a token by its own.
      viewer: via === "session" ? (viewer.names[0] ?? viewer.subject) : viewer.subject,
      via,
      admin: access.admin,
      teams: access.teams,
      seesApp: (app) => maySeeApp(access, owners, app),
      mayPlan: access.admin || access.teams.length > 0,
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

  private tokenViewer(authorization: string): Viewer | undefined {
    if (!authorization.startsWith("Bearer ")) return undefined;
    return this.options.tokens?.viewerOf(authorization.slice(7).trim());
  }
}
