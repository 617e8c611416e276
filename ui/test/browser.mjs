// Chromium for the browser tests: Debian's /usr/bin/chromium (or
// $CHROMIUM) driven by playwright-core, headless, sandbox off (root in
// CI), no network of its own, a fresh profile per launch. When either is
// missing, skipReason says why in one line and the tests skip.

import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const uiRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const repoRoot = resolve(uiRoot, "..");
export const outDir = join(uiRoot, "test-output");

const candidates = process.env.CHROMIUM ? [process.env.CHROMIUM] : ["/usr/bin/chromium", "/usr/bin/chromium-browser"];
const executablePath = candidates.find((p) => existsSync(p));

let playwright = null;
let importError = "";
try {
  playwright = await import("playwright-core");
} catch (e) {
  importError = String(e?.message ?? e).split("\n")[0];
}

export const skipReason = !playwright
  ? `browser tests skipped: playwright-core is not installed (run npm ci in ui/): ${importError}`
  : !executablePath
    ? `browser tests skipped: no chromium at ${candidates.join(" or ")} (apt-get install -y chromium, or set CHROMIUM)`
    : "";

let said = false;
/** Prints the skip line once per process; returns it for t.skip. */
export function sayskip() {
  if (!said && skipReason) {
    console.log(skipReason);
    said = true;
  }
  return skipReason;
}

/**
 * Launches Chromium with a fresh profile directory (Playwright's
 * persistent context: it takes the --user-data-dir itself); close() also
 * removes the directory.
 */
export async function launch(options = {}) {
  const profile = mkdtempSync(join(tmpdir(), "fledger-ui-chromium-"));
  const context = await playwright.chromium.launchPersistentContext(profile, {
    executablePath,
    viewport: { width: 1280, height: 900 },
    ...options,
    headless: true,
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
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export function shotPath(name) {
  mkdirSync(outDir, { recursive: true });
  return join(outDir, name);
}
