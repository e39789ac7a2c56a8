/**
 * Credential material blanked out of text from outside before it is said anywhere (a status file, a
 * commit message, a log line, the API): PEM blocks, whatever follows an HTTP authorization scheme
 * (`Bearer`, `Basic`: a header value a library quotes in its error can be a whole file), the values of
 * credential fields (`token: …`, `"client-key-data": "…"`, `password=…`) and of credential-like
 * environment variables (`GITFLEET_GIT_TOKEN=…`). Only the first MAX_REDACTED characters are read;
 * callers cut text shorter than that anyway.
 */
export function redactCredentials(text: string): string {
  const head = text.length > MAX_REDACTED ? text.slice(0, MAX_REDACTED) : text;
  return head
    .replace(PEM_BLOCK, REDACTED_PEM)
    .replace(AUTHORIZATION, (_match, scheme: string) => `${scheme} ${REDACTED}`)
    .replace(ENV_CREDENTIAL, (_match, name: string) => `${name}=${REDACTED}`)
    .replace(
      CREDENTIAL_FIELD,
      (_match, quote: string, key: string, separator: string) =>
        `${quote}${key}${quote}${separator}${REDACTED}`,
    );
}

/** What stands where credential material was. */
export const REDACTED = "[redacted]";
const REDACTED_PEM = "[PEM block redacted]";

/** How much of a text is read for redaction. */
export const MAX_REDACTED = 64 * 1024;

const PEM_BLOCK = /-----BEGIN [A-Z0-9 ]{1,60}-----[\s\S]*?(?:-----END [A-Z0-9 ]{1,60}-----|$)/g;
// Everything after the scheme: an unusable header value is quoted whole, separators and all.
const AUTHORIZATION = /\b(Bearer|Basic)\b[\s\S]*/i;
const ENV_CREDENTIAL =
  /\b([A-Z][A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|KEY|CREDENTIAL|CREDENTIALS))=(?:"[^"]*"|'[^']*'|[^\s]*)/g;
const CREDENTIAL_FIELD =
  /(["']?)\b(token|id-token|refresh-token|password|passwd|secret|client-key-data|client-certificate-data|certificate-authority-data|authorization|api[-_]?key|access[-_]?key|secret[-_]?access[-_]?key|private[-_]?key)\1(\s*[:=]\s*)(?:"[^"]*"|'[^']*'|[^\s,;&}\]]+)/gi;
