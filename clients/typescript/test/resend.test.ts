// FledgerClient's re-sends, against a scripted local HTTP server: a lost
// answer or a 503 is sent again only where that cannot record twice, and
// at most maxTries times.

import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";

import { FledgerClient, FledgerError } from "../src/index.js";

/** One scripted answer: a status with a JSON body and headers, or "drop" (the connection is closed unanswered). */
type Answer = "drop" | { status: number; body: unknown; headers?: Record<string, string> };

let script: Answer[] = [];
let seen: string[] = [];
let baseUrl = "";
const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  req.resume();
  req.on("end", () => {
    seen.push(`${req.method} ${req.url}`);
    const a = script.shift() ?? { status: 500, body: { error: "internal", detail: "script ran out" } };
    if (a === "drop") {
      req.socket.destroy();
      return;
    }
    res.writeHead(a.status, { "Content-Type": "application/json", ...a.headers });
    res.end(JSON.stringify(a.body));
  });
});

before(async () => {
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(() => {
  server.closeAllConnections();
  server.close();
});

const step = { status: 200, body: { turn_id: "t1", agent: "main", next: { action: "done", answered_by: "a/b", notices: [] } } };
const session = { status: 200, body: { session: { agent: "main", session: "s" }, events: ["SessionModelSelected"] } };
const unavailable = (recorded: "no" | "unknown"): Answer => ({
  status: 503,
  body: { error: "unavailable", detail: "no stream leader", recorded },
  headers: { "Retry-After": "0" },
});
const contention: Answer = { status: 503, body: { error: "contention", detail: "busy" }, headers: { "Retry-After": "0" } };

const client = (): FledgerClient => new FledgerClient({ baseUrl, maxTries: 3 });
const outcome = (c: FledgerClient) => c.reportOutcome("t1", { attempt: 1, ok: true });
const model = (c: FledgerClient) => c.selectModel("main", "s", { model: "a/b" });

const cases: { name: string; script: Answer[]; run: (c: FledgerClient) => Promise<unknown>; sent: number; fails?: number | "lost" }[] = [
  { name: "an outcome whose answer is lost is re-sent", script: ["drop", step], run: outcome, sent: 2 },
  { name: "an outcome after 503 unavailable (recorded unknown) is re-sent", script: [unavailable("unknown"), step], run: outcome, sent: 2 },
  { name: "a /model whose answer is lost is not re-sent", script: ["drop", session], run: model, sent: 1, fails: "lost" },
  { name: "a /model after 503 unavailable (recorded unknown) is not re-sent", script: [unavailable("unknown"), session], run: model, sent: 1, fails: 503 },
  { name: "a /model after 503 unavailable (recorded no) is re-sent", script: [unavailable("no"), session], run: model, sent: 2 },
  { name: "a /model after 503 contention is re-sent", script: [contention, session], run: model, sent: 2 },
  { name: "a begin without turn_id is not re-sent after a lost answer", script: ["drop", step], run: (c) => c.beginTurn({ session: "s" }), sent: 1, fails: "lost" },
  { name: "a begin with turn_id is re-sent after a lost answer", script: ["drop", step], run: (c) => c.beginTurn({ session: "s", turn_id: "t1" }), sent: 2 },
  { name: "re-sends stop at maxTries", script: [contention, contention, contention, step], run: outcome, sent: 3, fails: 503 },
  {
    name: "a 409 is never re-sent",
    script: [{ status: 409, body: { error: "outcome_mismatch", detail: "attempt 1 was recorded as failed" } }, step],
    run: outcome,
    sent: 1,
    fails: 409,
  },
];

for (const c of cases) {
  test(c.name, async () => {
    script = [...c.script];
    seen = [];
    const p = c.run(client());
    if (c.fails === undefined) {
      await p;
    } else if (c.fails === "lost") {
      await assert.rejects(p, TypeError);
    } else {
      const status = c.fails;
      await assert.rejects(p, (err: unknown) => err instanceof FledgerError && err.status === status);
    }
    assert.equal(seen.length, c.sent, `sent ${seen.join(", ")}`);
  });
}
