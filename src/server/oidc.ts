import { createHash, randomBytes } from "node:crypto";
import { createRemoteJWKSet, type JWTVerifyGetKey, jwtVerify } from "jose";
import { namesFromClaims, type Viewer } from "../model/viewers.js";
import { readBoundedResponse } from "../util/bounded-response.js";

/** What the operator configures for sign-in with OpenID Connect. */
export interface OidcSettings {
  /** The issuer URL, exactly as the provider's discovery document and ID tokens name it. */
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Where the provider sends the browser back: <public URL>/auth/callback. */
  readonly redirectUrl: string;
  /** Default: openid profile email groups. */
  readonly scopes?: readonly string[];
}

/** A sign-in in progress: kept by the browser in a short-lived signed cookie until the callback. */
export interface PendingLogin {
  readonly state: string;
  readonly nonce: string;
  readonly verifier: string;
  /** Where to go after signing in (a path of this server). */
  readonly returnTo: string;
}

const MAX_DISCOVERY_BYTES = 256 * 1024;
const MAX_TOKEN_BYTES = 256 * 1024;
const TIMEOUT_MS = 10_000;
const DEFAULT_SCOPES = ["openid", "profile", "email", "groups"];
/** Asymmetric signatures only: a provider's published keys can never be used as a shared secret. */
const SIGNATURE_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
];

/**
 * The authorization code flow with PKCE against one identity provider, as a confidential client:
 * the provider's endpoints from its discovery document (fetched once, from the configured issuer
 * only), the ID token verified with jose against the provider's published keys (issuer, audience,
 * expiry, nonce). gitfleet never handles a JWT by hand and never keeps the provider's tokens: the
 * ID token's claims become a Viewer, kept in gitfleet's own signed session cookie.
 */
export class OidcClient {
  private constructor(
    private readonly settings: OidcSettings,
    private readonly endpoints: { readonly authorization: string; readonly token: string },
    private readonly keys: JWTVerifyGetKey,
  ) {}

  /** Reads the issuer's discovery document; throws, naming what is wrong, when it does not fit. */
  static async discover(settings: OidcSettings): Promise<OidcClient> {
    const url = `${settings.issuer.replace(/\/$/, "")}/.well-known/openid-configuration`;
    const response = await fetch(url, { redirect: "error", signal: AbortSignal.timeout(TIMEOUT_MS) });
    if (!response.ok) throw new Error(`${url} answered ${response.status}`);
    const document = JSON.parse(await readBoundedResponse(response, MAX_DISCOVERY_BYTES)) as Record<
      string,
      unknown
    >;
    const endpointOf = (value: unknown, field: string): string => {
      if (typeof value !== "string") throw new Error(`the discovery document has no ${field}`);
      const parsed = new URL(value);
      if (parsed.protocol !== "https:" && parsed.protocol !== new URL(settings.issuer).protocol)
        throw new Error(`the discovery document's ${field} is not https`);
      return value;
    };
    if (document.issuer !== settings.issuer)
      throw new Error(
        `the discovery document names the issuer ${String(document.issuer)}, not ${settings.issuer}`,
      );
    const keys = createRemoteJWKSet(new URL(endpointOf(document.jwks_uri, "jwks_uri")), {
      timeoutDuration: TIMEOUT_MS,
    });
    return new OidcClient(
      settings,
      {
        authorization: endpointOf(document.authorization_endpoint, "authorization_endpoint"),
        token: endpointOf(document.token_endpoint, "token_endpoint"),
      },
      keys,
    );
  }

  /** Where to send the browser to sign in, and what to remember until it comes back. */
  begin(returnTo: string): { readonly location: string; readonly pending: PendingLogin } {
    const pending: PendingLogin = {
      state: random(),
      nonce: random(),
      verifier: random(48),
      returnTo: localPath(returnTo),
    };
    const url = new URL(this.endpoints.authorization);
    url.search = new URLSearchParams({
      response_type: "code",
      client_id: this.settings.clientId,
      redirect_uri: this.settings.redirectUrl,
      scope: (this.settings.scopes ?? DEFAULT_SCOPES).join(" "),
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: createHash("sha256").update(pending.verifier).digest("base64url"),
      code_challenge_method: "S256",
    }).toString();
    return { location: url.toString(), pending };
  }

  /** The viewer the provider signed in, from the callback's query and the pending sign-in; throws why not. */
  async finish(query: URLSearchParams, pending: PendingLogin): Promise<Viewer> {
    const error = query.get("error");
    if (error) throw new Error(`the identity provider refused: ${error.slice(0, 200)}`);
    if (query.get("state") !== pending.state) throw new Error("the sign-in's state does not match");
    const code = query.get("code");
    if (!code) throw new Error("the callback has no code");
    const response = await fetch(this.endpoints.token, {
      method: "POST",
      redirect: "error",
      signal: AbortSignal.timeout(TIMEOUT_MS),
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        accept: "application/json",
        authorization: `Basic ${Buffer.from(
          `${encodeURIComponent(this.settings.clientId)}:${encodeURIComponent(this.settings.clientSecret)}`,
        ).toString("base64")}`,
      },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code,
        redirect_uri: this.settings.redirectUrl,
        code_verifier: pending.verifier,
      }).toString(),
    });
    if (!response.ok) throw new Error(`the token endpoint answered ${response.status}`);
    const tokens = JSON.parse(await readBoundedResponse(response, MAX_TOKEN_BYTES)) as Record<
      string,
      unknown
    >;
    if (typeof tokens.id_token !== "string") throw new Error("the token endpoint gave no ID token");
    const { payload } = await jwtVerify(tokens.id_token, this.keys, {
      issuer: this.settings.issuer,
      audience: this.settings.clientId,
      algorithms: SIGNATURE_ALGORITHMS,
      requiredClaims: ["sub", "exp", "iat"],
      clockTolerance: 30,
    });
    if (payload.nonce !== pending.nonce) throw new Error("the ID token's nonce does not match the sign-in");
    // A token for several audiences must say it was issued to this client (OpenID Connect Core 3.1.3.7).
    if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== this.settings.clientId)
      throw new Error("the ID token was issued to another client (azp)");
    return { subject: String(payload.sub), names: namesFromClaims(payload) };
  }
}

/** A path of this server to return to after signing in; anything else (another origin included) is "/". */
export function localPath(returnTo: string): string {
  return /^\/(?![/\\])[\x21-\x7e]{0,2000}$/.test(returnTo) ? returnTo : "/";
}

function random(bytes = 24): string {
  return randomBytes(bytes).toString("base64url");
}
