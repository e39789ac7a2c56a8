import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { AccessGateOptions } from "../server/access-gate.js";
import { ApiTokens } from "../server/api-tokens.js";
import { isLoopback, listensOnLoopback } from "../server/http-server.js";
import { SignIn } from "../server/sign-in.js";
import { readBoundedFile } from "../util/bounded-file.js";
import { CliError, ExitCode } from "./exit-codes.js";

/** The flags of `gitfleet run` that say who may read the API and the dashboard. */
export interface AccessFlags {
  readonly listen?: string;
  readonly apiTokensFile?: string;
  readonly anonymousRead?: boolean;
  readonly oidcIssuer?: string;
  readonly oidcClientId?: string;
  readonly oidcClientSecretFile?: string;
  readonly oidcScopes?: readonly string[];
  readonly publicUrl?: string;
  readonly sessionKeyFile?: string;
}

const MAX_FILE_BYTES = 1024 * 1024;

/**
 * Who may read the endpoint, from the flags: automation's tokens, people signing in with OpenID
 * Connect, anonymous reading. With none of them an endpoint on loopback stays open (a laptop, a
 * port-forward: undefined, no gate), and one on any other address lets nobody in until the operator
 * chooses a way.
 */
export async function accessFromFlags(
  flags: AccessFlags,
  logger: Logger,
): Promise<Omit<AccessGateOptions, "model"> | undefined> {
  const tokens = flags.apiTokensFile ? await tokensOf(flags.apiTokensFile) : undefined;
  const signIn = flags.oidcIssuer ? await signInOf(flags, logger) : undefined;
  if (!flags.oidcIssuer)
    for (const [flag, value] of [
      ["--oidc-client-id", flags.oidcClientId],
      ["--oidc-client-secret-file", flags.oidcClientSecretFile],
      ["--session-key-file", flags.sessionKeyFile],
    ] as const)
      if (value !== undefined) throw new CliError(`${flag} needs --oidc-issuer`, ExitCode.Usage);
  const anonymousRead = flags.anonymousRead === true;
  if (!tokens && !signIn && !anonymousRead) {
    const listen = flags.listen ?? "127.0.0.1:8080";
    if (listensOnLoopback(listen)) {
      logger.info(
        `the API and the dashboard answer anyone who reaches ${listen} on this machine (no --oidc-issuer, --api-tokens-file or --anonymous-read)`,
      );
      return undefined;
    }
    logger.warn(
      `the API and the dashboard let nobody in on ${listen}: set --oidc-issuer, --api-tokens-file or --anonymous-read`,
    );
  }
  return { ...(tokens ? { tokens } : {}), ...(signIn ? { signIn } : {}), anonymousRead };
}

async function tokensOf(file: string): Promise<ApiTokens> {
  const text = await readText(file, "--api-tokens-file");
  try {
    return ApiTokens.parse(text);
  } catch (error) {
    throw new CliError(`--api-tokens-file ${file}: ${messageOf(error)}`, ExitCode.Usage);
  }
}

async function signInOf(flags: AccessFlags, logger: Logger): Promise<SignIn> {
  const issuer = urlFlag("--oidc-issuer", flags.oidcIssuer ?? "");
  if (issuer.protocol !== "https:" && !isLoopback(issuer.hostname))
    throw new CliError(
      "--oidc-issuer: an identity provider is reached over https (plain http only on loopback)",
      ExitCode.Usage,
    );
  if (!flags.oidcClientId) throw new CliError("--oidc-issuer needs --oidc-client-id", ExitCode.Usage);
  if (!flags.oidcClientSecretFile)
    throw new CliError("--oidc-issuer needs --oidc-client-secret-file", ExitCode.Usage);
  if (!flags.publicUrl)
    throw new CliError(
      "--oidc-issuer needs --public-url: the address people reach gitfleet at, which the identity provider sends them back to",
      ExitCode.Usage,
    );
  const publicUrl = urlFlag("--public-url", flags.publicUrl);
  const clientSecret = (await readText(flags.oidcClientSecretFile, "--oidc-client-secret-file")).trim();
  if (clientSecret === "") throw new CliError("--oidc-client-secret-file: the file is empty", ExitCode.Usage);
  const sessionKey = await sessionKeyOf(flags.sessionKeyFile, logger);
  return new SignIn({
    oidc: {
      issuer: flags.oidcIssuer ?? "",
      clientId: flags.oidcClientId,
      clientSecret,
      redirectUrl: new URL("auth/callback", publicUrl.href.endsWith("/") ? publicUrl : `${publicUrl.href}/`)
        .href,
      ...(flags.oidcScopes ? { scopes: flags.oidcScopes } : {}),
    },
    sessionKey,
    secureCookies: publicUrl.protocol === "https:",
    logger,
  });
}

async function sessionKeyOf(file: string | undefined, logger: Logger): Promise<Uint8Array> {
  if (!file) {
    logger.warn(
      "no --session-key-file: this process made a session key, so people sign in again when it restarts",
    );
    return randomBytes(32);
  }
  const read = await readBoundedFile(file, MAX_FILE_BYTES);
  if (!read.ok) throw new CliError(`--session-key-file: the file ${read.reason}`, ExitCode.Usage);
  if (read.bytes.length < 32)
    throw new CliError("--session-key-file: a session key is at least 32 bytes", ExitCode.Usage);
  return read.bytes;
}

async function readText(file: string, flag: string): Promise<string> {
  const read = await readBoundedFile(file, MAX_FILE_BYTES);
  if (!read.ok) throw new CliError(`${flag}: the file ${read.reason}`, ExitCode.Usage);
  return new TextDecoder("utf-8").decode(read.bytes);
}

function urlFlag(flag: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CliError(`${flag} ${value}: not a URL`, ExitCode.Usage);
  }
  if (
    (url.protocol !== "https:" && url.protocol !== "http:") ||
    url.username ||
    url.password ||
    url.search ||
    url.hash
  )
    throw new CliError(
      `${flag} ${value}: an http(s) URL without credentials, query or fragment`,
      ExitCode.Usage,
    );
  return url;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
