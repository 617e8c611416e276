// runTurn and FledgerClient against a real `fledger serve` (test/server.ts)
// with fixtures/configs/example.yaml: anthropic/claude-opus-4-6 (profiles
// anthropic:work, anthropic:personal), then openai/gpt-5, then
// groq/llama-3.3-70b-versatile. Each test uses its own agent, so one
// test's cooldowns do not reach another.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { FledgerClient, FledgerError, ProviderCallError, runTurn, uuidv7, type NextCall, type Notice, type TurnStep } from "../src/index.js";
import { startServe, type Served } from "./server.js";
import { WatchedClient } from "./watched.js";

let served: Served;
let client: FledgerClient;

before(async () => {
  served = await startServe(["main", "wait", "abort", "errors", "switch", "transport", "html", "cycle", "bigint", "dots"], ["--max-body", "262144"]);
  client = new FledgerClient({ baseUrl: served.url, token: served.token });
});

after(async () => {
  await served?.stop();
});

/** A provider SDK's error: status, headers, type, message. */
function sdkError(status: number, message: string, headers: Record<string, string>): Error {
  return Object.assign(new Error(message), { status, type: "rate_limit_error", headers: new Headers(headers) });
}

const callOf = (s: NextCall) => ({ provider: s.provider, model: s.model, profile: s.profile, kind: s.kind, attempt: s.attempt });

describe("runTurn", () => {
  test("rotates the rate-limited profile, falls back to the next model and answers", async () => {
    const calls: ReturnType<typeof callOf>[] = [];
    const notices: Notice[] = [];
    const turn = await runTurn(
      async (step) => {
        calls.push(callOf(step));
        if (step.provider === "anthropic") throw sdkError(429, "Rate limited", { "retry-after": "60" });
        return `answer from ${step.provider}/${step.model}`;
      },
      { client, agent: "main", session: "tg:rotate", onNotice: (n) => notices.push(n) },
    );
    assert.deepEqual(calls, [
      { provider: "anthropic", model: "claude-opus-4-6", profile: "anthropic:work", kind: "first", attempt: 1 },
      { provider: "anthropic", model: "claude-opus-4-6", profile: "anthropic:personal", kind: "rotation", attempt: 2 },
      { provider: "openai", model: "gpt-5", profile: "openai:user@example.com", kind: "fallback", attempt: 3 },
    ]);
    assert.deepEqual(notices, [
      { kind: "fallback", text: "↪️ Model Fallback: openai/gpt-5 (selected anthropic/claude-opus-4-6; rate limit)", delivered: true },
    ]);
    assert.equal(turn.action, "done");
    if (turn.action !== "done") return;
    assert.equal(turn.value, "answer from openai/gpt-5");
    assert.equal(turn.agent, "main");
    assert.deepEqual({ answered_by: turn.next.answered_by, profile: turn.next.profile }, { answered_by: "openai/gpt-5", profile: "openai:user@example.com" });

    const view = await client.getTurn(turn.turnId, { agent: "main" });
    assert.deepEqual({ phase: view.phase, attempts: view.attempts, action: view.next?.action }, { phase: "succeeded", attempts: 3, action: "done" });

    // Its model_fallback_decision records, typed by the generated DecisionRecord.
    const page = await client.listDecisions({ agent: "main" });
    const mine = page.decisions.filter((d) => d.turnId === turn.turnId);
    assert.deepEqual(
      mine.map((d) => ({ decision: d.decision, candidate: `${d.candidateProvider}/${d.candidateModel}`, reason: d.reason, next: d.nextCandidateProvider, tags: d.tags })),
      [
        { decision: "candidate_failed", candidate: "anthropic/claude-opus-4-6", reason: "rate_limit", next: "openai", tags: ["error_handling", "model_fallback", "candidate_failed"] },
        { decision: "candidate_succeeded", candidate: "openai/gpt-5", reason: undefined, next: undefined, tags: ["error_handling", "model_fallback", "candidate_succeeded"] },
      ],
    );
  });

  test("a /model outside the chain mid-turn returns switch; the same turn again runs on the selection", async () => {
    const calls: ReturnType<typeof callOf>[] = [];
    const session = "tg:switch";
    const call = async (step: NextCall) => {
      calls.push(callOf(step));
      if (step.provider === "anthropic") {
        // The user picks another model while this call is in flight.
        await client.selectModel("switch", session, { model: "google/gemini-2.5-pro", source: "user" });
        throw sdkError(529, "Overloaded", {});
      }
      return `answer from ${step.provider}/${step.model}`;
    };
    const turn = await runTurn(call, { client, agent: "switch", session });
    assert.equal(turn.action, "switch");
    if (turn.action !== "switch") return;
    assert.deepEqual({ switch_to: turn.next.switch_to, message: turn.next.message }, {
      switch_to: "google/gemini-2.5-pro",
      message: "LiveSessionModelSwitchError: google/gemini-2.5-pro was selected during the run; it is not in the candidate chain",
    });
    const again = await runTurn(call, { client, agent: "switch", session });
    assert.equal(again.action, "done");
    assert.deepEqual(calls, [
      { provider: "anthropic", model: "claude-opus-4-6", profile: "anthropic:work", kind: "first", attempt: 1 },
      { provider: "google", model: "gemini-2.5-pro", profile: undefined, kind: "first", attempt: 1 },
    ]);
    const view = await client.getTurn(turn.turnId, { agent: "switch" });
    assert.deepEqual({ phase: view.phase, action: view.next?.action }, { phase: "switched", action: "switch" });
  });

  test("a connection reset after a settled tool batch is continued on the same call", async () => {
    const calls: ReturnType<typeof callOf>[] = [];
    const turn = await runTurn(
      async (step) => {
        calls.push(callOf(step));
        if (step.attempt === 1) throw new ProviderCallError({ code: "ECONNRESET", message: "read ECONNRESET" }, { toolBatchSettled: true });
        return "continued";
      },
      { client, agent: "transport", session: "tg:transport" },
    );
    assert.equal(turn.action, "done");
    assert.deepEqual(calls, [
      { provider: "anthropic", model: "claude-opus-4-6", profile: "anthropic:work", kind: "first", attempt: 1 },
      { provider: "anthropic", model: "claude-opus-4-6", profile: "anthropic:work", kind: "transport_recovery", attempt: 2 },
    ]);
  });

  test("sleeps out a wait, resumes and answers on the retry", async () => {
    const calls: ReturnType<typeof callOf>[] = [];
    const actions: string[] = [];
    const turn = await runTurn(
      async (step) => {
        calls.push(callOf(step));
        if (step.attempt === 1) throw sdkError(429, "Rate limited", { "retry-after": "1" });
        return "ok";
      },
      { client, agent: "wait", session: "tg:wait", model: "groq/llama-3.3-70b-versatile", onStep: (s) => actions.push(s.next.action) },
    );
    assert.deepEqual(calls, [
      { provider: "groq", model: "llama-3.3-70b-versatile", profile: "groq:default", kind: "first", attempt: 1 },
      { provider: "groq", model: "llama-3.3-70b-versatile", profile: "groq:default", kind: "retry", attempt: 2 },
    ]);
    assert.deepEqual(actions, ["call", "wait", "call", "done"]);
    assert.equal(turn.action, "done");
  });

  test("an abort during the call records the attempt as aborted and stops the turn", async () => {
    const ctl = new AbortController();
    const steps: TurnStep[] = [];
    await assert.rejects(
      runTurn(
        (_step, ctx) =>
          new Promise<string>((_resolve, reject) => {
            ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason));
            ctl.abort();
          }),
        { client, agent: "abort", session: "tg:abort", signal: ctl.signal, onStep: (s) => steps.push(s) },
      ),
      { name: "AbortError" },
    );
    const last = steps.at(-1);
    assert.ok(last);
    assert.deepEqual(last.next, { action: "stop", disposition: "abort", reason: "unknown", message: "This operation was aborted", notices: [] });
    const view = await client.getTurn(last.turn_id, { agent: "abort" });
    assert.deepEqual({ phase: view.phase, attempts: view.attempts }, { phase: "stopped", attempts: 1 });
  });
});

describe("runTurn aborted while a request is on its way", () => {
  // The abort comes as the request is handed to fetch: runTurn rejects at
  // once, the request still reaches the server, and the call its answer
  // plans is reported as aborted, so the turn does not stay open.
  const cases: { name: string; session: string; aborted: RegExp; attempts: number }[] = [
    { name: "the begin", session: "tg:abort-begin", aborted: /\/v1\/turns$/, attempts: 1 },
    { name: "the outcome report (whose answer is the rotation's call)", session: "tg:abort-report", aborted: /\/outcomes$/, attempts: 2 },
  ];
  for (const c of cases) {
    test(`an abort during ${c.name} stops the turn: the planned attempt is reported as aborted`, async () => {
      const ctl = new AbortController();
      const reason = new Error("user cancelled");
      const watched = new WatchedClient({
        baseUrl: served.url,
        token: served.token,
        fetch: (input, init) => {
          const sent = fetch(input, init);
          if (c.aborted.test(String(input))) ctl.abort(reason);
          return sent;
        },
      });
      const turnId = uuidv7();
      await assert.rejects(
        runTurn(() => Promise.reject(sdkError(429, "Rate limited", { "retry-after": "60" })), {
          client: watched,
          agent: "abort",
          session: c.session,
          turn_id: turnId,
          signal: ctl.signal,
        }),
        (err: unknown) => err === reason,
      );
      await watched.idle();
      const view = await client.getTurn(turnId, { agent: "abort" });
      assert.deepEqual({ phase: view.phase, attempts: view.attempts }, { phase: "stopped", attempts: c.attempts });
      assert.match(await client.metrics(), /^fledger_engine_open_turns\{agent="abort"\} 0$/m);
    });
  }
});

describe("runTurn reports any shape of provider error", () => {
  const selfBody: Record<string, unknown> = { error: { type: "api_error", message: "upstream failed" } };
  selfBody.self = selfBody;
  const cases: { agent: string; name: string; thrown: () => unknown }[] = [
    {
      agent: "html",
      name: "a 10 MB HTML body",
      thrown: () => Object.assign(new Error("Bad gateway"), { status: 502, body: "<html>" + "x".repeat(10 << 20) + "</html>" }),
    },
    { agent: "cycle", name: "a body that refers to itself", thrown: () => Object.assign(new Error("Bad gateway"), { status: 502, body: selfBody }) },
    {
      agent: "bigint",
      name: "a BigInt in the body",
      thrown: () => Object.assign(new Error("Bad gateway"), { status: 502, body: { request_id: 12345678901234567890n } }),
    },
  ];
  for (const c of cases) {
    test(`${c.name}: the attempt is recorded and the turn goes on`, async () => {
      const outcomes: number[] = [];
      const spy: typeof fetch = (input, init) => {
        if (String(input).endsWith("/outcomes")) outcomes.push(String(init?.body ?? "").length);
        return fetch(input, init);
      };
      const spied = new FledgerClient({ baseUrl: served.url, token: served.token, fetch: spy });
      const attempts: number[] = [];
      const turn = await runTurn(
        async (step) => {
          attempts.push(step.attempt);
          if (step.attempt === 1) throw c.thrown();
          return "ok";
        },
        { client: spied, agent: c.agent, session: "tg:shape" },
      );
      assert.equal(turn.action, "done");
      assert.deepEqual(attempts, [1, 2]);
      // One report an attempt: the bounded report was accepted as it was.
      assert.equal(outcomes.length, 2);
      assert.ok((outcomes[0] ?? 0) < 100_000, `report of ${outcomes[0]} characters`);
      // Attempt 2 is planned only once attempt 1's outcome is recorded.
      const view = await client.getTurn(turn.turnId, { agent: c.agent });
      assert.deepEqual({ phase: view.phase, attempts: view.attempts }, { phase: "succeeded", attempts: 2 });
    });
  }
});

describe("path segments . and ..", () => {
  /**
   * What a request on a "." or ".." name may end with: its answer, or a
   * 400 refusal of the name (a server may refuse such turn ids and session
   * keys); never a route miss (404 not_found, 405).
   */
  async function answerOrRefusal<T>(p: Promise<T>): Promise<T | undefined> {
    try {
      return await p;
    } catch (err) {
      assert.ok(err instanceof FledgerError, `got ${String(err)}`);
      assert.equal(err.status, 400, `${err.status} ${err.code}: ${err.detail}`);
      return undefined;
    }
  }

  for (const name of [".", ".."]) {
    test(`getSession of a session named ${name} reaches the session route`, async () => {
      const s = await answerOrRefusal(client.getSession("dots", name));
      if (s !== undefined) assert.deepEqual({ agent: s.agent, session: s.session }, { agent: "dots", session: name });
    });
  }

  test("runTurn with turn_id . reports to its own turn", async () => {
    const fail502 = Object.assign(new Error("Bad gateway"), { status: 502 });
    const turn = await answerOrRefusal(
      runTurn(async (step) => (step.attempt === 1 ? Promise.reject(fail502) : "ok"), { client, agent: "dots", session: "tg:dots", turn_id: "." }),
    );
    if (turn === undefined) return;
    assert.deepEqual({ action: turn.action, turnId: turn.turnId }, { action: "done", turnId: "." });
    const view = await client.getTurn(".", { agent: "dots" });
    assert.deepEqual({ phase: view.phase, attempts: view.attempts }, { phase: "succeeded", attempts: 2 });
  });
});

describe("FledgerClient errors", () => {
  /** Begins a turn of agent errors, answered with its first call. */
  const begin = (session: string, model?: string) => client.beginTurn({ agent: "errors", session, model });

  const cases: { name: string; status: number; code: string; run: () => Promise<unknown> }[] = [
    { name: "an empty session", status: 400, code: "invalid_request", run: () => begin("") },
    {
      name: "a body that is not JSON",
      status: 400,
      code: "invalid_json",
      run: () => client.request("POST", "/v1/turns", { body: '{"session":' }),
    },
    {
      name: "a wrong token",
      status: 401,
      code: "unauthorized",
      run: () => new FledgerClient({ baseUrl: served.url, token: "wrong" }).getTurn("x"),
    },
    { name: "an unknown turn", status: 404, code: "unknown_turn", run: () => client.getTurn("no-such-turn", { agent: "errors" }) },
    { name: "an unknown agent", status: 404, code: "unknown_agent", run: () => client.getSession("no-such-agent", "s") },
    { name: "an unknown path", status: 404, code: "not_found", run: () => client.request("GET", "/v1/nope") },
    { name: "a wrong method", status: 405, code: "method_not_allowed", run: () => client.request("PUT", "/v1/turns", { body: {} }) },
    {
      name: "an outcome for an attempt never started",
      status: 409,
      code: "attempt_not_planned",
      run: async () => {
        const s = await begin("tg:409");
        return client.reportOutcome(s.turn_id, { agent: "errors", attempt: 9, ok: true });
      },
    },
    {
      name: "a body over --max-body",
      status: 413,
      code: "body_too_large",
      run: () => client.beginTurn({ agent: "errors", session: "tg:413", fallbacks_override: ["x/" + "y".repeat(300_000)] }),
    },
    {
      name: "a body that is not application/json",
      status: 415,
      code: "invalid_request",
      run: () => client.request("POST", "/v1/turns", { body: '{"session":"s"}', contentType: "text/plain" }),
    },
    {
      name: "a pin of an unknown profile",
      status: 422,
      code: "unknown_profile",
      run: () => client.pinProfile("errors", "tg:422", { profile: "anthropic:nobody" }),
    },
    {
      name: "a resume before the wait is over",
      status: 425,
      code: "wait_not_over",
      run: async () => {
        const s = await begin("tg:425", "groq/llama-3.3-70b-versatile");
        assert.equal(s.next.action, "call");
        const w = await client.reportOutcome(s.turn_id, {
          agent: "errors",
          attempt: 1,
          error: { status: 429, message: "Rate limited", headers: { "retry-after": "8" } },
        });
        assert.equal(w.next.action, "wait");
        return client.resumeTurn(s.turn_id, { agent: "errors" });
      },
    },
  ];
  for (const c of cases) {
    test(`${c.status} ${c.code}: ${c.name}`, async () => {
      await assert.rejects(c.run(), (err: unknown) => {
        assert.ok(err instanceof FledgerError, `got ${String(err)}`);
        assert.deepEqual({ status: err.status, code: err.code }, { status: c.status, code: c.code });
        assert.equal(err.body?.error, c.code);
        assert.ok(err.detail.length > 0, "detail is empty");
        if (c.status === 425) assert.ok(err.retryAfterMs !== undefined && err.retryAfterMs > 0, `Retry-After ${err.retryAfterMs}`);
        return true;
      });
    });
  }
});
