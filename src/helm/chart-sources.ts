import { isIP } from "node:net";
import { oneLine } from "../model/one-line.js";
import { type AddressClass, classifyAddress } from "../util/address-class.js";

/** One place charts may come from, as the operator listed it: a scheme, a host (with port) and a path prefix. */
export interface ChartSource {
  readonly scheme: "http" | "https" | "oci";
  /** Lowercased, with its port unless the scheme's default. */
  readonly host: string;
  /** "" or "/a/b" (no trailing slash). */
  readonly path: string;
}

/** Whether a URL may be fetched, and on what grounds (`listed`: the operator named it). */
export type Admission =
  | { readonly ok: true; readonly origin: string; readonly listed: boolean }
  | { readonly ok: false; readonly reason: string };

// Names that reach inside a cluster or this host, whatever they resolve to: the fleet repo may not
// point gitfleet at them unless the operator lists them.
const INTERNAL_NAMES =
  /(^|\.)(localhost|svc|cluster\.local|local|internal|localdomain|home\.arpa|lan|intranet|corp)$/;

/**
 * The one policy every fetch a fleet repo chooses goes through (chart repositories, their index's
 * chart URLs, OCI registries and their token services, redirects). With an allow-list, only the
 * sources it names may be fetched, at any address. Without one, any source on a public address may:
 * never loopback, link-local, private or cluster-internal names and addresses. Either way, a URL a
 * source leads to (a chart URL in its index, a redirect, a token realm) is fetched only when it has
 * the source's own origin or is itself listed. Errors say what was refused, never what a server said.
 */
export class ChartSources {
  private constructor(private readonly listed: readonly ChartSource[]) {}

  /** The policy of the operator's entries (URL prefixes), or why an entry is not one. */
  static parse(entries: readonly string[]): ChartSources | { readonly error: string } {
    const sources: ChartSource[] = [];
    for (const entry of entries) {
      const source = parseSource(entry);
      if ("error" in source) return source;
      sources.push(source);
    }
    return new ChartSources(sources);
  }

  /** The operator's entries, as parsed. */
  get entries(): readonly ChartSource[] {
    return this.listed;
  }

  /** Whether the chart source the fleet repo names (a repository URL, an oci:// reference) may be fetched. */
  admitSource(url: URL): Admission {
    const target = sourceOf(url);
    if ("error" in target) return { ok: false, reason: target.error };
    if (this.listed.some((entry) => matches(entry, target))) return admitted(target, true);
    if (this.listed.length > 0)
      return {
        ok: false,
        reason: `${describe(target)} is not among the chart sources the operator allows (--chart-source)`,
      };
    const internal = internalName(target.host);
    if (internal) return { ok: false, reason: `${describe(target)} ${internal}` };
    return admitted(target, false);
  }

  /** Whether a URL a source led to may be fetched: the source's own origin, or one the operator listed. */
  admitFollow(url: URL, from: Extract<Admission, { ok: true }>): Admission {
    const target = sourceOf(url);
    if ("error" in target) return { ok: false, reason: target.error };
    if (this.listed.some((entry) => matches(entry, target))) return admitted(target, true);
    if (originOf(target) === from.origin) return { ...from, ok: true };
    return {
      ok: false,
      reason: `${describe(target)} is another host than the chart source's; gitfleet goes there only when the operator lists it (--chart-source)`,
    };
  }

  /** Why an address a host resolved to may not be connected to, or undefined when it may. */
  refuseAddress(address: string, admission: Extract<Admission, { ok: true }>): string | undefined {
    if (admission.listed) return undefined;
    const kind = classifyAddress(address);
    return kind === "public" ? undefined : `${admission.origin} ${addressReason(kind)}`;
  }
}

function admitted(target: ChartSource, listed: boolean): Admission {
  return { ok: true, origin: originOf(target), listed };
}

function parseSource(entry: string): ChartSource | { error: string } {
  const bad = (why: string) => ({
    error: `--chart-source ${JSON.stringify(oneLine(entry, 120))}: ${why} (e.g. https://charts.example.com/stable, oci://ghcr.io/org)`,
  });
  let url: URL;
  try {
    url = new URL(entry.trim());
  } catch {
    return bad("not a URL");
  }
  if (url.username || url.password) return bad("a chart source carries no credentials");
  if (url.search || url.hash) return bad("a chart source is a URL prefix, without a query");
  const source = sourceOf(url);
  return "error" in source ? bad(source.error) : source;
}

// The scheme, host and path of a URL as sources compare them.
function sourceOf(url: URL): ChartSource | { error: string } {
  const scheme = url.protocol.slice(0, -1);
  if (scheme !== "http" && scheme !== "https" && scheme !== "oci")
    return { error: `${scheme}: is not a chart source's scheme (http, https or oci)` };
  if (url.hostname === "") return { error: "a chart source names a host" };
  const port = url.port === "" || url.port === defaultPort(scheme) ? "" : `:${url.port}`;
  const path = decodeURIComponent(url.pathname).replace(/\/+$/, "");
  if (path.split("/").some((part) => part === ".." || part === "."))
    return { error: "a chart source's path has no . or .. segments" };
  return { scheme, host: `${url.hostname.toLowerCase()}${port}`, path };
}

function defaultPort(scheme: string): string {
  return scheme === "http" ? "80" : "443";
}

function matches(entry: ChartSource, target: ChartSource): boolean {
  return (
    entry.scheme === target.scheme &&
    entry.host === target.host &&
    (entry.path === "" || target.path === entry.path || target.path.startsWith(`${entry.path}/`))
  );
}

function originOf(target: ChartSource): string {
  return `${target.scheme === "oci" ? "https" : target.scheme}://${target.host}`;
}

function describe(target: ChartSource): string {
  return oneLine(`${target.scheme}://${target.host}`, 120);
}

// Why a host name is internal, when it is: what a cluster or this host answers to, not the internet.
function internalName(host: string): string | undefined {
  const name = host
    .replace(/:\d+$/, "")
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "");
  if (isIP(name) !== 0) {
    const kind = classifyAddress(name);
    return kind === "public" ? undefined : addressReason(kind);
  }
  if (!name.includes(".")) return "is a single-label name (a cluster-internal Service or host)";
  if (INTERNAL_NAMES.test(name)) return "is a cluster-internal or local name";
  return undefined;
}

function addressReason(kind: AddressClass): string {
  return `is a ${kind} address, which gitfleet does not fetch from unless the operator lists it (--chart-source)`;
}
