// A real fledger for the browser tests: the binary built once into a
// temporary directory (or $FLEDGER_BIN), scenarios run into a temporary
// --data, the CLI's own JSON read for the expected values, and the
// viewer's server started on a free loopback port: `fledger view` when
// the binary has it, else `fledger serve` (same HTTP API and page).

import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { repoRoot } from "./browser.mjs";

export function setup() {
  const dir = mkdtempSync(join(tmpdir(), "fledger-ui-"));
  let bin = process.env.FLEDGER_BIN;
  if (!bin) {
    bin = join(dir, "fledger");
    execFileSync("go", ["build", "-o", bin, "./cmd/fledger"], { cwd: repoRoot, stdio: ["ignore", "inherit", "inherit"] });
  }
  const data = join(dir, "data");
  const cli = (...args) => execFileSync(bin, ["--data", data, ...args], { cwd: repoRoot, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  const jsonl = (...args) =>
    cli(...args)
      .split("\n")
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l));
  let hasView = true;
  try {
    execFileSync(bin, ["view", "--help"], { stdio: "ignore" });
  } catch {
    hasView = false;
  }
  return {
    dir,
    bin,
    data,
    cli,
    jsonl,
    hasView,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Starts the viewer's server on the ledger; resolves {url, stop}. */
export async function startViewer(f, { agents, token }) {
  const args = f.hasView
    ? ["--data", f.data, "view", "--http", "127.0.0.1:0", "--token", token]
    : ["--data", f.data, "serve", "--http", "127.0.0.1:0", "--no-micro", "--token", token, "--agent", agents.join(",")];
  const proc = spawn(f.bin, args, { stdio: ["ignore", "ignore", "pipe"] });
  const exited = new Promise((done) => proc.once("exit", done));
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill("SIGTERM");
      const t = setTimeout(() => proc.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(t);
    }
  };
  const url = await new Promise((resolve, reject) => {
    const log = [];
    const timer = setTimeout(() => reject(new Error(`fledger ${args[2]} did not start in 30 s:\n${log.join("\n")}`)), 30_000);
    createInterface({ input: proc.stderr }).on("line", (line) => {
      log.push(line);
      const m = /\bhttp=(\S+)/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(m[1].replace(/^"|"$/g, ""));
      }
    });
    proc.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`fledger ${args[2]} exited (${code}):\n${log.join("\n")}`));
    });
  });
  return { url: url.startsWith("http") ? url : `http://${url}`, stop, command: args[2] };
}
