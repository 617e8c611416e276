// runTurn: the step loop of docs/api.md "The step protocol" — begin, make
// each call the server asks for, report its outcome, sleep out waits,
// resume, until the turn is done, exhausted or stopped.

import {
  FledgerClient,
  FledgerError,
  sleep,
  type Next,
  type NextCall,
  type NextDone,
  type NextExhausted,
  type NextStop,
  type NextSwitch,
  type Notice,
  type RequestBody,
  type TurnStep,
} from "./client.js";
import { minimalError, ProviderCallError, toProviderError } from "./provider-error.js";

/** What a call function is given besides the step: the turn and an abort signal. */
export interface CallContext {
  turnId: string;
  agent: string;
  /**
   * Aborted when runTurn's signal is: stop the provider call and throw.
   * runTurn does not wait for it: what the call settles with after the
   * abort is dropped.
   */
  signal: AbortSignal;
}

/**
 * Makes the provider call the step names (provider, model, auth profile)
 * and resolves with the answer, or throws the provider's error.
 */
export type ProviderCall<T> = (step: NextCall, ctx: CallContext) => Promise<T>;

export type RunTurnOptions = RequestBody<"beginTurn"> & {
  client: FledgerClient;
  /** Every notice of every step (show those with delivered true). */
  onNotice?: (notice: Notice, next: Next) => void;
  /** Every step, as the server answered it. */
  onStep?: (step: TurnStep) => void;
  /**
   * Aborts the turn, and runTurn rejects with the signal's reason as soon
   * as it aborts. A call in progress is reported as aborted at once,
   * without waiting for it to settle (the server stops the turn,
   * disposition abort), by one report that this signal does not cancel
   * (bounded by the client's timeoutMs). A wait in progress ends (the
   * turn stays waiting). A begin, report or resume in progress is not
   * cancelled: it goes on in the background for at most timeoutMs more,
   * and when its answer is a call, that attempt is reported as aborted
   * (fire-and-forget), so the server stops the turn; any other answer, or
   * a failure, sends nothing more (onStep is not called after the
   * rejection). A signal aborted before runTurn sends nothing.
   */
  signal?: AbortSignal;
};

interface Ended {
  turnId: string;
  agent: string;
}

/**
 * How a turn ended: answered, exhausted, stopped or switched (the user
 * selected `next.switch_to` during the run, outside the chain: run the same
 * turn again, which starts on that selection). A done turn's value is
 * what the answering call resolved with (undefined only when a turn_id
 * given to runTurn names a turn that had already answered).
 */
export type TurnResult<T> =
  | (Ended & { action: "done"; next: NextDone; value: T })
  | (Ended & { action: "exhausted"; next: NextExhausted })
  | (Ended & { action: "stop"; next: NextStop })
  | (Ended & { action: "switch"; next: NextSwitch });

/** How many 425 answers a resume takes before giving up. */
const maxEarlyResumes = 10;

/**
 * Runs one turn: begins it (with a fresh UUIDv7 turn_id unless one is
 * given, so a lost answer can be re-sent), calls `call` for each `call`
 * step and reports its outcome, sleeps out each `wait` and resumes, and
 * resolves when the turn is done (with the answering call's value),
 * exhausted, stopped or switched.
 */
export async function runTurn<T>(call: ProviderCall<T>, opts: RunTurnOptions): Promise<TurnResult<T>> {
  const { client, onNotice, onStep, signal, ...begin } = opts;
  signal?.throwIfAborted();
  let step = await sendStep(client, signal, (s) => client.beginTurn({ ...begin, turn_id: begin.turn_id ?? uuidv7() }, { signal: s }));
  let value: T | undefined;
  for (;;) {
    onStep?.(step);
    const next = step.next;
    for (const n of next.notices) onNotice?.(n, next);
    const ended: Ended = { turnId: step.turn_id, agent: step.agent };
    switch (next.action) {
      case "done":
        return { ...ended, action: "done", next, value: value as T };
      case "exhausted":
        return { ...ended, action: "exhausted", next };
      case "stop":
        return { ...ended, action: "stop", next };
      case "switch":
        return { ...ended, action: "switch", next };
      case "wait":
        await sleep(next.ms ?? 0, signal);
        step = await resume(client, step, signal);
        break;
      case "call": {
        const r = await attempt(call, step, next, signal);
        if (r.aborted) await reportAbort(client, step, r.outcome, onStep, signal);
        value = r.value;
        const reported = step;
        step = await sendStep(client, signal, (s) => report(client, reported, r.outcome, s));
        break;
      }
    }
  }
}

type Outcome = Omit<RequestBody<"reportOutcome">, "turn_id" | "agent">;

/** What a race with the caller's abort settles with when the abort wins it: never a call's value or a step. */
const abandon: unique symbol = Symbol("abandon");

/** The error an aborted attempt is reported with (the server stops the turn, disposition abort). */
const abortError = { name: "AbortError", message: "This operation was aborted" };

/**
 * Sends one request whose answer is the turn's next step (a begin, an
 * outcome report, a resume) and resolves with that step, or rejects with
 * the signal's reason as soon as the signal aborts (a signal already
 * aborted sends nothing). The abort does not cancel the request, though:
 * it may already have been recorded (a begin that began the turn, a
 * report or resume whose answer is a call the server now expects), so it
 * goes on without the caller for at most the client's timeoutMs more,
 * re-sends included. Should its answer be a call, that attempt is reported
 * as aborted ({@link reportAborted}), so the server stops the turn; any
 * other answer (a wait, done, exhausted, stop, switch) or a failure sends
 * nothing more, and none reaches onStep.
 */
async function sendStep(
  client: FledgerClient,
  signal: AbortSignal | undefined,
  send: (signal: AbortSignal | undefined) => Promise<TurnStep>,
): Promise<TurnStep> {
  if (signal === undefined) return send(undefined);
  signal.throwIfAborted();
  const detached = new AbortController();
  const sent = send(detached.signal);
  let onAbort = (): void => {};
  const abandoned = new Promise<typeof abandon>((resolve) => {
    onAbort = () => resolve(abandon);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    const step = await Promise.race([sent, abandoned]);
    if (step !== abandon) return step;
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
  const timeout = new DOMException("The operation timed out after the turn was aborted", "TimeoutError");
  const timer = setTimeout(() => detached.abort(timeout), client.timeoutMs);
  sent
    .then(
      (late) => {
        if (late.next.action === "call") reportAborted(client, late, late.next);
      },
      () => undefined,
    )
    .finally(() => clearTimeout(timer));
  throw signal.reason;
}

/**
 * Reports the call a step asks for as aborted without making it, and
 * without waiting for the answer: fire-and-forget, bounded by the
 * client's timeoutMs (re-sends included), a failure dropped.
 */
function reportAborted(client: FledgerClient, step: TurnStep, next: NextCall): void {
  sendAbortReport(client, step, { attempt: next.attempt, error: abortError }).catch(() => undefined);
}

/** Reports an aborted attempt under a timeout of its own (the client's timeoutMs, re-sends included), not the aborted signal. */
function sendAbortReport(client: FledgerClient, step: TurnStep, outcome: Outcome): Promise<TurnStep> {
  return report(client, step, outcome, AbortSignal.timeout(client.timeoutMs));
}

/**
 * Reports an aborted call and rejects with the signal's reason. The report
 * goes out without the aborted signal, which would cancel it before it is
 * sent, under a timeout of its own (the client's timeoutMs, re-sends
 * included), so the server stops the turn. Should it fail, runTurn still
 * rejects with the signal's reason: the turn then stays open, as a
 * gateway's crash leaves it.
 */
async function reportAbort(
  client: FledgerClient,
  step: TurnStep,
  outcome: Outcome,
  onStep: ((step: TurnStep) => void) | undefined,
  signal: AbortSignal | undefined,
): Promise<never> {
  let stopped: TurnStep | undefined;
  try {
    stopped = await sendAbortReport(client, step, outcome);
  } catch {
    // The caller asked for the abort: its reason is the answer.
  }
  if (stopped !== undefined) onStep?.(stopped);
  throw signal?.reason;
}

/**
 * Makes one call: its outcome to report, its value, and whether the turn
 * was aborted (the signal aborted before the call settled, whether it
 * threw or not). An abort ends the wait for the call at once: a call that
 * ignores its signal may settle later or never, and whatever it settles
 * with is dropped, neither reported nor left an unhandled rejection.
 */
async function attempt<T>(
  call: ProviderCall<T>,
  step: TurnStep,
  next: NextCall,
  signal: AbortSignal | undefined,
): Promise<{ outcome: Outcome; value?: T; aborted: boolean }> {
  if (signal?.aborted) return { outcome: { attempt: next.attempt, error: abortError }, aborted: true };
  const ctl = new AbortController();
  const stop = (): void => ctl.abort(signal?.reason);
  signal?.addEventListener("abort", stop, { once: true });
  const abandoned = new Promise<typeof abandon>((resolve) => ctl.signal.addEventListener("abort", () => resolve(abandon), { once: true }));
  const started = Date.now();
  const aborted = () => ({ outcome: { attempt: next.attempt, error: abortError, latency_ms: Date.now() - started }, aborted: true });
  // An async wrapper, so a call that throws before returning its promise rejects it instead.
  const settled = (async () => call(next, { turnId: step.turn_id, agent: step.agent, signal: ctl.signal }))();
  settled.catch(() => {});
  try {
    const value = await Promise.race([settled, abandoned]);
    if (signal?.aborted || value === abandon) return aborted();
    return { outcome: { attempt: next.attempt, ok: true, latency_ms: Date.now() - started }, value, aborted: false };
  } catch (err) {
    if (signal?.aborted) return aborted();
    const outcome: Outcome = { attempt: next.attempt, error: toProviderError(err), latency_ms: Date.now() - started };
    if (err instanceof ProviderCallError) {
      if (err.outputStarted) outcome.output_started = true;
      if (err.toolStarted) outcome.tool_started = true;
      if (err.toolBatchSettled) outcome.tool_batch_settled = true;
    }
    return { outcome, aborted: false };
  } finally {
    signal?.removeEventListener("abort", stop);
  }
}

/**
 * Reports an attempt's outcome. A failed attempt whose report the server
 * refuses as malformed or too large (400, 413) is reported again with its
 * error's status, code and message alone, so the attempt is recorded and
 * the turn goes on whatever the provider's error looked like.
 */
async function report(client: FledgerClient, step: TurnStep, outcome: Outcome, signal: AbortSignal | undefined): Promise<TurnStep> {
  try {
    return await client.reportOutcome(step.turn_id, { agent: step.agent, ...outcome }, { signal });
  } catch (err) {
    const refused = err instanceof FledgerError && (err.status === 400 || err.status === 413);
    if (!refused || outcome.error === undefined) throw err;
    return client.reportOutcome(step.turn_id, { agent: step.agent, ...outcome, error: minimalError(outcome.error) }, { signal });
  }
}

/** Resumes a waiting turn, sleeping out 425 wait_not_over answers. */
async function resume(client: FledgerClient, step: TurnStep, signal: AbortSignal | undefined): Promise<TurnStep> {
  for (let i = 1; ; i++) {
    try {
      return await sendStep(client, signal, (s) => client.resumeTurn(step.turn_id, { agent: step.agent }, { signal: s }));
    } catch (err) {
      if (!(err instanceof FledgerError) || err.status !== 425 || i >= maxEarlyResumes) throw err;
      await sleep(err.retryAfterMs ?? 1000, signal);
    }
  }
}

/** A UUIDv7 (RFC 9562): 48 bits of Unix ms, then random bits. */
export function uuidv7(now = Date.now()): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  for (let i = 5, t = now; i >= 0; i--, t = Math.floor(t / 256)) b[i] = t % 256;
  b[6] = ((b[6] ?? 0) & 0x0f) | 0x70;
  b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
  const hex = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
