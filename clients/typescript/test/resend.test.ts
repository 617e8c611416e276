// FledgerClient's re-sends, against a scripted local HTTP server: a lost
// answer or a 503 is sent again only where that cannot record twice, and
// at most maxTries times.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { FledgerClient, FledgerError, runTurn } from "../src/index.js";
import { callStep, doneStep, ScriptedServer, type Answer } from "./scripted.js";

const server = new ScriptedServer();

before(() => server.start());
after(() => server.close());

const step = { status: 200, body: { turn_id: "t1", agent: "main", next: { action: "done", answered_by: "a/b", notices: [] } } };
const session = { status: 200, body: { session: { agent: "main", session: "s" }, events: ["SessionModelSelected"] } };
const unavailable = (recorded: "no" | "unknown"): Answer => ({
  status: 503,
  body: { error: "unavailable", detail: "no stream leader", recorded },
  headers: { "Retry-After": "0" },
});
const contention: Answer = { status: 503, body: { error: "contention", detail: "busy" }, headers: { "Retry-After": "0" } };

const client = (): FledgerClient => new FledgerClient({ baseUrl: server.url, maxTries: 3 });
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
    server.reset(c.script);
    const p = c.run(client());
    if (c.fails === undefined) {
      await p;
    } else if (c.fails === "lost") {
      await assert.rejects(p, TypeError);
    } else {
      const status = c.fails;
      await assert.rejects(p, (err: unknown) => err instanceof FledgerError && err.status === status);
    }
    assert.equal(server.seen.length, c.sent, `sent ${server.seen.join(", ")}`);
  });
}

for (const refusal of [
  { status: 413, body: { error: "body_too_large", detail: "the request is larger than 65536 bytes" } },
  { status: 400, body: { error: "invalid_request", detail: "error: status: not an HTTP status" } },
]) {
  test(`a report refused with ${refusal.status} is sent again with status, code and message alone`, async () => {
    server.reset([callStep("t1"), refusal, doneStep("t1")]);
    const turn = await runTurn(
      () => Promise.reject(Object.assign(new Error("Bad gateway"), { status: 502, code: "E502", type: "api_error", body: "<html>…</html>", headers: { "x-a": "b" } })),
      { client: client(), agent: "main", session: "s", turn_id: "t1" },
    );
    assert.equal(turn.action, "done");
    assert.deepEqual(server.seen, ["POST /v1/turns", "POST /v1/turns/t1/outcomes", "POST /v1/turns/t1/outcomes"]);
    const [full, minimal] = server.bodies.slice(1).map((b) => JSON.parse(b) as { attempt: number; error: unknown });
    assert.deepEqual(full?.error, { status: 502, code: "E502", type: "api_error", name: "Error", message: "Bad gateway", body: "<html>…</html>", headers: { "x-a": "b" } });
    assert.deepEqual(minimal?.error, { status: 502, code: "E502", message: "Bad gateway" });
    assert.equal(minimal?.attempt, 1);
  });
}

test("a report refused with 409 is not sent again", async () => {
  server.reset([callStep("t1"), { status: 409, body: { error: "outcome_mismatch", detail: "attempt 1 was recorded as succeeded" } }]);
  await assert.rejects(
    runTurn(() => Promise.reject(new Error("x")), { client: client(), agent: "main", session: "s", turn_id: "t1" }),
    (err: unknown) => err instanceof FledgerError && err.status === 409,
  );
  assert.equal(server.seen.length, 2);
});

test(". and .. path segments reach the server as %2E and %2E%2E", async () => {
  server.reset([callStep("."), doneStep("."), session, session]);
  await runTurn(async () => "ok", { client: client(), agent: "main", session: "s", turn_id: "." });
  const { latency_ms: _, ...outcome } = JSON.parse(server.bodies[1] ?? "") as Record<string, unknown>;
  assert.deepEqual(outcome, { agent: "main", attempt: 1, ok: true });
  await client().getSession("..", "..");
  await client().request("GET", "/v1/sessions/main/%2E", { query: { a: "1 2" } });
  assert.deepEqual(server.seen, ["POST /v1/turns", "POST /v1/turns/%2E/outcomes", "GET /v1/sessions/%2E%2E/%2E%2E", "GET /v1/sessions/main/%2E?a=1+2"]);
});

test("a lost answer on a . path is a TypeError, re-sent like fetch's", async () => {
  server.reset(["drop", session]);
  await client().getSession("main", "..");
  assert.deepEqual(server.seen, ["GET /v1/sessions/main/%2E%2E", "GET /v1/sessions/main/%2E%2E"]);
});
