// A scripted local HTTP server for the client's tests: each request gets
// the next answer of its script, and what was sent is kept in order.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * One scripted answer: a status with a JSON body and headers, "drop" (the
 * connection is closed unanswered), "hang" (never answered) or a
 * {@link Later} (answered when the test releases it).
 */
export type Answer = "drop" | "hang" | Later | { status: number; body: unknown; headers?: Record<string, string> };

/** An answer the test gives later: the request waits for release. */
export class Later {
  /** Resolves with the answer given to release. */
  readonly answer: Promise<Answer>;
  /** Answers the waiting request (once) with answer. */
  readonly release: (answer: Answer) => void;

  constructor() {
    let release: (answer: Answer) => void = () => {};
    this.answer = new Promise<Answer>((resolve) => (release = resolve));
    this.release = release;
  }
}

export class ScriptedServer {
  url = "";
  /** The answers still to give, first first (500 internal once it runs out). */
  script: Answer[] = [];
  /** "METHOD /path?query" of each request, in arrival order. */
  seen: string[] = [];
  /** The body of each request, in arrival order. */
  bodies: string[] = [];
  /** Called when a request has arrived, with its answer, before it is given. */
  onRequest: ((seen: string, answer: Answer) => void) | undefined;
  readonly #server: Server;

  constructor() {
    this.#server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => this.#answer(req, res, Buffer.concat(chunks).toString()));
    });
  }

  /** Starts listening on a free loopback port. */
  async start(): Promise<void> {
    await new Promise<void>((done) => this.#server.listen(0, "127.0.0.1", done));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** Forgets what was sent and answers the next requests with script. */
  reset(script: Answer[]): void {
    this.script = [...script];
    this.seen = [];
    this.bodies = [];
    this.onRequest = undefined;
  }

  /** Closes every connection, hanging ones included, and stops listening. */
  close(): void {
    this.#server.closeAllConnections();
    this.#server.close();
  }

  #answer(req: IncomingMessage, res: ServerResponse, body: string): void {
    const seen = `${req.method} ${req.url}`;
    this.seen.push(seen);
    this.bodies.push(body);
    const a = this.script.shift() ?? { status: 500, body: { error: "internal", detail: "script ran out" } };
    this.onRequest?.(seen, a);
    this.#give(req, res, a);
  }

  #give(req: IncomingMessage, res: ServerResponse, a: Answer): void {
    if (a instanceof Later) {
      void a.answer.then((later) => this.#give(req, res, later));
      return;
    }
    if (a === "hang") return;
    if (a === "drop") {
      req.socket.destroy();
      return;
    }
    res.writeHead(a.status, { "Content-Type": "application/json", ...a.headers });
    res.end(JSON.stringify(a.body));
  }
}

/** A 200 TurnStep of turn turnId (agent main) whose next is next, notices none. */
function turnStep(turnId: string, next: Record<string, unknown>): Answer {
  return { status: 200, body: { turn_id: turnId, agent: "main", next: { ...next, notices: [] } } };
}

/** Call a/b with profile a:p: attempt 1 (kind first), or a later attempt (kind retry). */
export const callStep = (turnId: string, attempt = 1): Answer =>
  turnStep(turnId, { action: "call", provider: "a", model: "b", profile: "a:p", kind: attempt === 1 ? "first" : "retry", attempt });
/** Wait ms, then resume. */
export const waitStep = (turnId: string, ms: number): Answer => turnStep(turnId, { action: "wait", ms, resume_at: Date.now() + ms });
/** Answered by a/b. */
export const doneStep = (turnId: string): Answer => turnStep(turnId, { action: "done", answered_by: "a/b" });
/** Stopped by an abort (what the server answers an AbortError report). */
export const abortStep = (turnId: string): Answer =>
  turnStep(turnId, { action: "stop", disposition: "abort", reason: "unknown", message: "This operation was aborted" });
