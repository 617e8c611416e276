// A real `fledger serve` for the tests: the binary is built once from
// ../../cmd/fledger (or taken from $FLEDGER_BIN), started on a free
// loopback port with its own data directory, and stopped after.

import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

/** The package root (clients/typescript), from dist/test/. */
export const packageRoot = resolve(fileURLToPath(new URL("../..", import.meta.url)));
/** The repository root. */
export const repoRoot = resolve(packageRoot, "../..");

export interface Served {
  url: string;
  token: string;
  stop(): Promise<void>;
}

/** Builds the fledger binary into dir, unless $FLEDGER_BIN names one. */
function fledgerBinary(dir: string): string {
  const given = process.env.FLEDGER_BIN;
  if (given !== undefined && given !== "") return given;
  const bin = join(dir, "fledger");
  execFileSync("go", ["build", "-o", bin, "./cmd/fledger"], { cwd: repoRoot, stdio: ["ignore", "inherit", "inherit"] });
  return bin;
}

/**
 * Starts `fledger --data DIR serve --http 127.0.0.1:0` with the example
 * config, a token and the given agents, and resolves with the URL it
 * logs ("fledger serve" http=URL).
 */
export async function startServe(agents: string[], extra: string[] = []): Promise<Served> {
  const dir = mkdtempSync(join(tmpdir(), "fledger-ts-"));
  const bin = fledgerBinary(dir);
  const token = "ts-client-test-token";
  const args = ["--data", join(dir, "data"), "serve", "--http", "127.0.0.1:0", "--no-micro", "--token", token,
    "--config", join(repoRoot, "fixtures/configs/example.yaml"), "--agent", agents.join(","), ...extra];
  const proc = spawn(bin, args, { stdio: ["ignore", "ignore", "pipe"] });
  const exited = new Promise<void>((done) => proc.once("exit", () => done()));
  const stop = async (): Promise<void> => {
    await kill(proc, exited);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const url = await listening(proc, 30_000);
    return { url, token, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Reads serve's log until it names its HTTP address. */
function listening(proc: ChildProcess, timeoutMs: number): Promise<string> {
  return new Promise((resolveURL, reject) => {
    const log: string[] = [];
    const lines = createInterface({ input: proc.stderr! });
    const timer = setTimeout(() => reject(new Error(`fledger serve did not start in ${timeoutMs} ms:\n${log.join("\n")}`)), timeoutMs);
    lines.on("line", (line) => {
      log.push(line);
      const m = /msg="fledger serve" http=(\S+)/.exec(line);
      if (m?.[1] !== undefined) {
        clearTimeout(timer);
        resolveURL(m[1]);
      }
    });
    proc.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`fledger serve exited (${code}):\n${log.join("\n")}`));
    });
  });
}

async function kill(proc: ChildProcess, exited: Promise<void>): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  proc.kill("SIGTERM");
  const t = setTimeout(() => proc.kill("SIGKILL"), 15_000);
  await exited;
  clearTimeout(t);
}
