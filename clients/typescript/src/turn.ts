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
  type ProviderError,
  type RequestBody,
  type TurnStep,
} from "./client.js";

/**
 * Thrown by a call function to report a provider error as it is, with
 * whether output or a tool call had started (the attempt is then never
 * retried). Any other thrown value is reported through
 * {@link toProviderError}.
 */
export class ProviderCallError extends Error {
  override readonly name = "ProviderCallError";
  readonly error: ProviderError;
  readonly outputStarted: boolean;
  readonly toolStarted: boolean;
  /**
   * The call continued the transcript after a settled tool batch: a
   * transport failure before any output is then continued on the same
   * call (kind transport_recovery, at most twice a turn); do not rerun
   * the tools.
   */
  readonly toolBatchSettled: boolean;

  constructor(error: ProviderError, opts: { outputStarted?: boolean; toolStarted?: boolean; toolBatchSettled?: boolean } = {}) {
    super(typeof error.message === "string" ? error.message : "provider error");
    this.error = error;
    this.outputStarted = opts.outputStarted ?? false;
    this.toolStarted = opts.toolStarted ?? false;
    this.toolBatchSettled = opts.toolBatchSettled ?? false;
  }
}

/** What a call function is given besides the step: the turn and an abort signal. */
export interface CallContext {
  turnId: string;
  agent: string;
  /** Aborted when runTurn's signal is: stop the provider call and throw. */
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
   * Aborts the turn: a call in flight is reported as aborted (the server
   * stops the turn, disposition abort) and runTurn rejects with the
   * signal's reason.
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
  let step = await client.beginTurn({ ...begin, turn_id: begin.turn_id ?? uuidv7() });
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
        value = r.value;
        step = await client.reportOutcome(step.turn_id, { agent: step.agent, ...r.outcome });
        if (r.aborted) {
          onStep?.(step);
          throw signal?.reason;
        }
        break;
      }
    }
  }
}

type Outcome = Omit<RequestBody<"reportOutcome">, "turn_id" | "agent">;

/** Makes one call: its outcome to report, its value, and whether the turn was aborted. */
async function attempt<T>(
  call: ProviderCall<T>,
  step: TurnStep,
  next: NextCall,
  signal: AbortSignal | undefined,
): Promise<{ outcome: Outcome; value?: T; aborted: boolean }> {
  const aborted = (): Outcome => ({ attempt: next.attempt, error: { name: "AbortError", message: "This operation was aborted" } });
  const ctl = new AbortController();
  const stop = (): void => ctl.abort(signal?.reason);
  if (signal?.aborted) return { outcome: aborted(), aborted: true };
  signal?.addEventListener("abort", stop, { once: true });
  const started = Date.now();
  try {
    const value = await call(next, { turnId: step.turn_id, agent: step.agent, signal: ctl.signal });
    return { outcome: { attempt: next.attempt, ok: true, latency_ms: Date.now() - started }, value, aborted: false };
  } catch (err) {
    if (signal?.aborted) return { outcome: { ...aborted(), latency_ms: Date.now() - started }, aborted: true };
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

/** Resumes a waiting turn, sleeping out 425 wait_not_over answers. */
async function resume(client: FledgerClient, step: TurnStep, signal: AbortSignal | undefined): Promise<TurnStep> {
  for (let i = 1; ; i++) {
    try {
      return await client.resumeTurn(step.turn_id, { agent: step.agent });
    } catch (err) {
      if (!(err instanceof FledgerError) || err.status !== 425 || i >= maxEarlyResumes) throw err;
      await sleep(err.retryAfterMs ?? 1000, signal);
    }
  }
}

/**
 * The ProviderError fields of a thrown value: an SDK error's status,
 * code, type, message, name, body (or error), headers (a Headers or a
 * plain object) and cause, as fledger classifies them.
 */
export function toProviderError(err: unknown, depth = 0): ProviderError {
  if (err instanceof ProviderCallError) return err.error;
  if (typeof err !== "object" || err === null) return { message: String(err) };
  const o = err as Record<string, unknown>;
  const out: ProviderError = {};
  if (typeof o.status === "number" || typeof o.status === "string") out.status = o.status;
  else if (typeof o.statusCode === "number") out.status = o.statusCode;
  if (typeof o.code === "string" || typeof o.code === "number") out.code = o.code;
  if (typeof o.type === "string") out.type = o.type;
  if (typeof o.name === "string") out.name = o.name;
  if (o.message !== undefined) out.message = o.message;
  const body = o.body ?? o.error;
  if (body !== undefined && !(body instanceof Error)) out.body = body;
  const headers = headerRecord(o.headers);
  if (headers) out.headers = headers;
  if (typeof o.provider === "string") out.provider = o.provider;
  if (typeof o.model === "string") out.model = o.model;
  if (o.cause !== undefined && depth < 4) out.cause = toProviderError(o.cause, depth + 1);
  return out;
}

function headerRecord(h: unknown): Record<string, string> | undefined {
  if (typeof h !== "object" || h === null) return undefined;
  const out: Record<string, string> = {};
  const entries = h instanceof Headers ? [...h.entries()] : Object.entries(h);
  for (const [k, v] of entries) {
    if (typeof v === "string") out[k.toLowerCase()] = v;
    else if (typeof v === "number") out[k.toLowerCase()] = String(v);
  }
  return out;
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
