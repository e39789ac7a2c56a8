import { type Browser, chromium } from "playwright-core";

/** Debian's chromium (never a downloaded browser), or the one GITFLEET_CHROMIUM names. */
const CHROMIUM = process.env.GITFLEET_CHROMIUM ?? "/usr/bin/chromium";

/** A headless chromium that reaches only what a test points it at (no background traffic). */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
