// Aborts, against a scripted local HTTP server (test/scripted.ts): the
// caller's signal cancels every request FledgerClient makes on its behalf
// (a server that never answers included) and runTurn's waits, rejecting
// with the signal's reason; runTurn rejects at once during a begin,
// report or resume too, which goes on in the background and, when
// answered with a call, reports that attempt as aborted (once, nothing
// else after any other answer); an aborted call is reported once, at the
// abort, by a report the signal does not cancel, and a call that ignores
// its signal is not waited for; a signal aborted before the call sends
// nothing. The client's timeout is far longer than any bound asserted
// here, so waiting one out fails the test.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { FledgerClient, runTurn, type TurnStep } from "../src/index.js";
import { abortStep, callStep, doneStep, Later, ScriptedServer, waitStep, type Answer } from "./scripted.js";
import { WatchedClient } from "./watched.js";

const server = new ScriptedServer();

before(() => server.start());
after(() => server.close());

/** Long enough that a request waited out instead of aborted fails the test's own timeout. */
const longTimeoutMs = 20_000;
/** How long after the abort the rejection may come: far more than it takes, far less than a request timeout. */
const promptMs = 1_000;
const testTimeout = { timeout: 10_000 };

const client = (timeoutMs = longTimeoutMs): FledgerClient => new FledgerClient({ baseUrl: server.url, timeoutMs, maxTries: 5 });
const turn = { agent: "main", session: "s", turn_id: "t1" };
const begin = "POST /v1/turns";
const outcomes = "POST /v1/turns/t1/outcomes";
const resume = "POST /v1/turns/t1/resume";

/** Aborts ctl with a reason of its own, noting when. */
function aborter(): { ctl: AbortController; reason: Error; abort(): void; abortedAt(): number } {
  const ctl = new AbortController();
  const reason = new Error("user cancelled");
  let at = -1;
  return {
    ctl,
    reason,
    abort: () => {
      at = performance.now();
      ctl.abort(reason);
    },
    abortedAt: () => at,
  };
}

/** Awaits p, which must reject with exactly reason within promptMs of the abort. */
async function rejectsPromptly(p: Promise<unknown>, a: ReturnType<typeof aborter>): Promise<void> {
  await assert.rejects(p, (err: unknown) => err === a.reason);
  assert.ok(a.abortedAt() >= 0, "rejected before the abort");
  const after = performance.now() - a.abortedAt();
  assert.ok(after < promptMs, `rejected ${Math.round(after)} ms after the abort`);
}

const failing = (): Promise<string> => Promise.reject(Object.assign(new Error("Overloaded"), { status: 529 }));

/**
 * Where the abort comes: by default when the last scripted request has
 * arrived, before it is answered; with answered, 20 ms after (in the wait
 * its answer asks for); with abortOnStep, once runTurn has begun the step.
 */
const inFlight: { name: string; script: Answer[]; sent: string[]; answered?: true; abortOnStep?: TurnStep["next"]["action"] }[] = [
  { name: "a wait of a minute", script: [callStep("t1"), waitStep("t1", 60_000)], sent: [begin, outcomes], abortOnStep: "wait" },
  {
    name: "a 425 wait_not_over of a minute",
    script: [callStep("t1"), waitStep("t1", 0), { status: 425, body: { error: "wait_not_over", detail: "wait 60 s" }, headers: { "Retry-After": "60" } }],
    sent: [begin, outcomes, resume],
    answered: true,
  },
];

for (const c of inFlight) {
  test(`runTurn: an abort during ${c.name} rejects with the signal's reason at once and sends nothing more`, testTimeout, async () => {
    server.reset(c.script);
    const a = aborter();
    if (c.abortOnStep === undefined) {
      server.onRequest = () => {
        if (server.script.length > 0) return;
        if (c.answered) setTimeout(a.abort, 20);
        else a.abort();
      };
    }
    const onStep = (s: TurnStep): void => {
      if (s.next.action === c.abortOnStep) setTimeout(a.abort, 0);
    };
    await rejectsPromptly(runTurn(failing, { ...turn, client: client(), signal: a.ctl.signal, onStep }), a);
    assert.deepEqual(server.seen, c.sent);
  });
}

/** Runs body, then fails if a promise rejected unhandled meanwhile. */
async function noUnhandled(body: () => Promise<void>): Promise<void> {
  const unhandled: unknown[] = [];
  const onUnhandled = (err: unknown): void => void unhandled.push(err);
  process.on("unhandledRejection", onUnhandled);
  try {
    await body();
    await new Promise((done) => setImmediate(done));
    assert.deepEqual(unhandled, []);
  } finally {
    process.off("unhandledRejection", onUnhandled);
  }
}

const internal: Answer = { status: 500, body: { error: "internal", detail: "boom" } };

/** The request during which the abort comes (when it reaches the server), and the attempt a call answering it would start. */
const stepRequests: { name: string; script: Answer[]; sent: string[]; attempt: number }[] = [
  { name: "a begin", script: [], sent: [begin], attempt: 1 },
  { name: "an outcome report", script: [callStep("t1")], sent: [begin, outcomes], attempt: 2 },
  { name: "a resume", script: [callStep("t1"), waitStep("t1", 0)], sent: [begin, outcomes, resume], attempt: 2 },
];

/**
 * How that request is answered once runTurn has rejected: late (the
 * test releases it) with answer, then resent when its answer is lost and
 * it is sent again; reported when the answer asks for a call, whose
 * abort report is answered with reportAnswer (default the server's stop).
 */
const lateAnswers: { name: string; answer: (attempt: number) => Answer; resent?: (attempt: number) => Answer; reported?: true; reportAnswer?: Answer; timeoutMs?: number }[] = [
  { name: "a call", answer: (n) => callStep("t1", n), reported: true },
  { name: "a call whose abort report is refused (500)", answer: (n) => callStep("t1", n), reported: true, reportAnswer: internal },
  { name: "an answer lost, re-sent and answered with a call", answer: () => "drop", resent: (n) => callStep("t1", n), reported: true },
  { name: "done", answer: () => doneStep("t1") },
  { name: "a stop", answer: () => abortStep("t1") },
  { name: "a wait of a minute", answer: () => waitStep("t1", 60_000) },
  { name: "a refusal (500)", answer: () => internal },
  { name: "nothing before the client's timeout (300 ms)", answer: () => "hang", timeoutMs: 300 },
];

for (const r of stepRequests) {
  for (const l of lateAnswers) {
    const then = l.reported ? `its attempt ${r.attempt} is reported as aborted, once` : "nothing more is sent";
    test(`runTurn: an abort during ${r.name} rejects at once; answered after with ${l.name}, ${then}`, testTimeout, () =>
      noUnhandled(async () => {
        const later = new Later();
        server.reset([...r.script, later, ...(l.resent ? [l.resent(r.attempt)] : []), l.reportAnswer ?? abortStep("t1")]);
        const a = aborter();
        server.onRequest = (_seen, answer) => {
          if (answer === later) a.abort();
        };
        const steps: string[] = [];
        const c = new WatchedClient({ baseUrl: server.url, timeoutMs: l.timeoutMs ?? longTimeoutMs, maxTries: 5 });
        await rejectsPromptly(runTurn(failing, { ...turn, client: c, signal: a.ctl.signal, onStep: (s) => steps.push(s.next.action) }), a);
        assert.equal(c.pending, 1, "rejected only after the request had ended");
        assert.deepEqual(server.seen, r.sent);
        const stepsAtAbort = [...steps];

        later.release(l.answer(r.attempt));
        await c.idle();
        assert.deepEqual(server.seen, [...r.sent, ...(l.resent ? [r.sent.at(-1)] : []), ...(l.reported ? [outcomes] : [])]);
        if (l.reported) {
          const report = JSON.parse(server.bodies.at(-1) ?? "") as unknown;
          assert.deepEqual(report, { agent: "main", attempt: r.attempt, error: { name: "AbortError", message: "This operation was aborted" } });
        }
        assert.deepEqual(steps, stepsAtAbort, "onStep called after the rejection");
      }),
    );
  }
}

test("runTurn: an abort during the call is reported once, by a report the abort does not cancel", testTimeout, async () => {
  server.reset([callStep("t1"), abortStep("t1")]);
  const a = aborter();
  const steps: string[] = [];
  const p = runTurn(
    (_step, ctx) =>
      new Promise<string>((_resolve, reject) => {
        ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason));
        setTimeout(a.abort, 0);
      }),
    { ...turn, client: client(), signal: a.ctl.signal, onStep: (s) => steps.push(`${s.next.action}`) },
  );
  await rejectsPromptly(p, a);
  assert.deepEqual(server.seen, [begin, outcomes]);
  const { latency_ms: _, ...report } = JSON.parse(server.bodies[1] ?? "") as Record<string, unknown>;
  assert.deepEqual(report, { agent: "main", attempt: 1, error: { name: "AbortError", message: "This operation was aborted" } });
  assert.deepEqual(steps, ["call", "stop"]);
});

test("runTurn: a call that resolves after the abort is reported as aborted too", testTimeout, async () => {
  server.reset([callStep("t1"), abortStep("t1"), doneStep("t1")]);
  const a = aborter();
  const p = runTurn(
    async () => {
      a.abort();
      return "answered anyway";
    },
    { ...turn, client: client(), signal: a.ctl.signal },
  );
  await rejectsPromptly(p, a);
  assert.deepEqual(server.seen, [begin, outcomes]);
  assert.equal((JSON.parse(server.bodies[1] ?? "") as { error?: { name?: string } }).error?.name, "AbortError");
});

/** A call that ignores its signal: settled only by the test, with a value or a provider error, or never. */
const lateCalls: { name: string; settle?: (resolve: (v: string) => void, reject: (err: unknown) => void) => void }[] = [
  { name: "resolves late", settle: (resolve) => resolve("answered anyway") },
  { name: "rejects late", settle: (_resolve, reject) => reject(Object.assign(new Error("Overloaded"), { status: 529 })) },
  { name: "never settles" },
];

for (const c of lateCalls) {
  test(`runTurn: an abort during a call that ignores its signal and ${c.name} rejects at once, reported once and nothing after`, testTimeout, async () => {
    const health = { status: 200, body: { status: "ok" } };
    server.reset([callStep("t1"), abortStep("t1"), health]);
    await noUnhandled(async () => {
      const a = aborter();
      const steps: string[] = [];
      let settle: ((v: string) => void) | undefined;
      let fail: ((err: unknown) => void) | undefined;
      const late = new Promise<string>((resolve, reject) => {
        settle = resolve;
        fail = reject;
      });
      const p = runTurn(
        () => {
          setTimeout(a.abort, 0);
          return late;
        },
        { ...turn, client: client(), signal: a.ctl.signal, onStep: (s) => steps.push(s.next.action) },
      );
      await rejectsPromptly(p, a);
      assert.deepEqual(server.seen, [begin, outcomes]);
      const { latency_ms: _, ...report } = JSON.parse(server.bodies[1] ?? "") as Record<string, unknown>;
      assert.deepEqual(report, { agent: "main", attempt: 1, error: { name: "AbortError", message: "This operation was aborted" } });
      assert.deepEqual(steps, ["call", "stop"]);

      // The call settles after runTurn has rejected: once its settling has
      // run its course, a request sent after it arrives after anything
      // runTurn would have sent for it.
      if (c.settle !== undefined && settle !== undefined && fail !== undefined) {
        c.settle(settle, fail);
        await late.then(
          () => undefined,
          () => undefined,
        );
      }
      await new Promise((done) => setImmediate(done));
      await client().health();
      assert.deepEqual(server.seen, [begin, outcomes, "GET /healthz"]);
      assert.deepEqual(steps, ["call", "stop"]);
    });
  });
}

test("runTurn: an abort report the server never answers ends after the client's timeout, sent once", testTimeout, async () => {
  server.reset([callStep("t1"), "hang"]);
  const a = aborter();
  const p = runTurn(
    async (_step, ctx) => {
      a.abort();
      throw ctx.signal.reason;
    },
    { ...turn, client: client(300), signal: a.ctl.signal },
  );
  await assert.rejects(p, (err: unknown) => err === a.reason);
  assert.deepEqual(server.seen, [begin, outcomes]);
});

test("runTurn: a signal aborted before the call sends nothing", testTimeout, async () => {
  server.reset([callStep("t1")]);
  const a = aborter();
  a.abort();
  await assert.rejects(runTurn(failing, { ...turn, client: client(), signal: a.ctl.signal }), (err: unknown) => err === a.reason);
  assert.deepEqual(server.seen, []);
});

const session = { status: 200, body: { session: { agent: "main", session: "s" }, events: ["SessionModelSelected"] } };

/** Every public request method, called with opts. */
const methods: { name: string; run: (c: FledgerClient, opts: { signal: AbortSignal }) => Promise<unknown> }[] = [
  { name: "beginTurn", run: (c, o) => c.beginTurn({ session: "s", turn_id: "t1" }, o) },
  { name: "reportOutcome", run: (c, o) => c.reportOutcome("t1", { attempt: 1, ok: true }, o) },
  { name: "resumeTurn", run: (c, o) => c.resumeTurn("t1", {}, o) },
  { name: "getTurn", run: (c, o) => c.getTurn("t1", {}, o) },
  { name: "getSession", run: (c, o) => c.getSession("main", "s", o) },
  { name: "getSession of a . session (node:http)", run: (c, o) => c.getSession("main", ".", o) },
  { name: "selectModel", run: (c, o) => c.selectModel("main", "s", { model: "a/b" }, o) },
  { name: "resetSession", run: (c, o) => c.resetSession("main", "s", {}, o) },
  { name: "pinProfile", run: (c, o) => c.pinProfile("main", "s", { profile: "a:p" }, o) },
  { name: "completeCompaction", run: (c, o) => c.completeCompaction("main", "s", o) },
  { name: "setAuthOrder", run: (c, o) => c.setAuthOrder("main", "a", {}, o) },
  { name: "listProfiles", run: (c, o) => c.listProfiles({}, o) },
  { name: "listDecisions", run: (c, o) => c.listDecisions({}, o) },
  { name: "health", run: (c, o) => c.health(o) },
  { name: "ready", run: (c, o) => c.ready(o) },
  { name: "metrics", run: (c, o) => c.metrics(o) },
];

for (const m of methods) {
  test(`${m.name}: a signal aborted before the call rejects with its reason and sends nothing`, testTimeout, async () => {
    server.reset([session]);
    const a = aborter();
    a.abort();
    await assert.rejects(m.run(client(), { signal: a.ctl.signal }), (err: unknown) => err === a.reason);
    assert.deepEqual(server.seen, []);
  });

  test(`${m.name}: an abort while the server never answers rejects with the signal's reason at once`, testTimeout, async () => {
    server.reset(["hang"]);
    const a = aborter();
    server.onRequest = a.abort;
    await rejectsPromptly(m.run(client(), { signal: a.ctl.signal }), a);
    assert.equal(server.seen.length, 1);
  });
}

const contention: Answer = { status: 503, body: { error: "contention", detail: "busy" }, headers: { "Retry-After": "60" } };

for (const c of [
  { name: "an abort as the answer is lost", first: "drop" as const, delayMs: undefined },
  { name: "an abort in the wait after 503 contention (Retry-After 60)", first: contention, delayMs: 20 },
]) {
  test(`${c.name}: the request is not re-sent`, testTimeout, async () => {
    server.reset([c.first, session]);
    const a = aborter();
    server.onRequest = () => (c.delayMs === undefined ? a.abort() : setTimeout(a.abort, c.delayMs));
    await rejectsPromptly(client().getSession("main", "s", { signal: a.ctl.signal }), a);
    assert.deepEqual(server.seen, ["GET /v1/sessions/main/s"]);
  });
}
