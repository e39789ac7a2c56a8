import { createHmac, timingSafeEqual } from "node:crypto";
import type { Viewer } from "../model/viewers.js";

/** The cookie a signed-in person's session is kept in. */
export const SESSION_COOKIE = "gitfleet_session";
/** The cookie a sign-in in progress is kept in, from /auth/login until /auth/callback. */
export const SIGN_IN_COOKIE = "gitfleet_signin";

const MAX_COOKIE_CHARS = 8192;

/**
 * A cookie value only this controller can have made: base64url JSON of what it holds and when it
 * expires, then an HMAC-SHA256 under a key only the controller holds, bound to the cookie's purpose
 * (a sign-in in progress can never be passed off as a session, nor the reverse). Nothing secret is
 * in one; the MAC makes it unforgeable, the expiry bounds a stolen one.
 */
export function seal(purpose: string, content: unknown, key: Uint8Array, expiresAtMs: number): string {
  const body = Buffer.from(JSON.stringify({ c: content, e: expiresAtMs })).toString("base64url");
  return `${body}.${mac(purpose, body, key)}`;
}

/** What a sealed value holds, or undefined when it is absent, forged, sealed for another purpose, malformed or expired. */
export function unseal(
  purpose: string,
  value: string | undefined,
  key: Uint8Array,
  nowMs: number,
): unknown | undefined {
  if (!value || value.length > MAX_COOKIE_CHARS) return undefined;
  const dot = value.lastIndexOf(".");
  if (dot < 0) return undefined;
  const [body, tag] = [value.slice(0, dot), value.slice(dot + 1)];
  const expected = Buffer.from(mac(purpose, body, key));
  const given = Buffer.from(tag);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(body, "base64url").toString("utf-8"));
  } catch {
    return undefined;
  }
  const { c, e } = (parsed ?? {}) as { c?: unknown; e?: unknown };
  return typeof e === "number" && e > nowMs ? c : undefined;
}

/** A session cookie's value: the viewer a sign-in gave, until expiresAtMs. */
export function sealSession(viewer: Viewer, key: Uint8Array, expiresAtMs: number): string {
  return seal("session", { s: viewer.subject, n: viewer.names }, key, expiresAtMs);
}

/** The viewer of a session cookie, or undefined when it is absent, forged, malformed or expired. */
export function openSession(value: string | undefined, key: Uint8Array, nowMs: number): Viewer | undefined {
  const content = unseal("session", value, key, nowMs);
  const { s, n } = (content ?? {}) as { s?: unknown; n?: unknown };
  if (typeof s !== "string" || !Array.isArray(n) || !n.every((name) => typeof name === "string"))
    return undefined;
  return { subject: s, names: n as string[] };
}

/** One cookie's value from a Cookie header. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

function mac(purpose: string, body: string, key: Uint8Array): string {
  return createHmac("sha256", key).update(`${purpose}\n${body}`).digest("base64url");
}
