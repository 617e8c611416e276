// A real fledger for the browser tests: the binary built once into a
// temporary directory (or $FLEDGER_BIN), scenarios run into a temporary
// --data, the CLI's own JSON read for the expected values, and
// `fledger view` started on that ledger on a free loopback port.

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
  return {
    dir,
    bin,
    data,
    cli,
    jsonl,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Starts `fledger view` (every agent of the ledger); resolves {url, stop}. */
export async function startViewer(f, { token }) {
  const args = ["--data", f.data, "view", "--http", "127.0.0.1:0", "--token", token];
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
    const timer = setTimeout(() => reject(new Error(`fledger view did not start in 30 s:\n${log.join("\n")}`)), 30_000);
    createInterface({ input: proc.stderr }).on("line", (line) => {
      log.push(line);
      const m = /\bhttp=(\S+)/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    proc.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`fledger view exited (${code}):\n${log.join("\n")}`));
    });
  });
  return { url, stop };
}
