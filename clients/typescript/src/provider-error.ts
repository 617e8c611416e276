// The ProviderError runTurn reports for whatever a call function threw:
// bounded in size and always serialisable, so no shape of a provider's
// error (a 10 MB HTML page, a body that refers to itself, a BigInt, a
// throwing getter) can keep an attempt from being recorded.

import type { ProviderError } from "./client.js";

/**
 * How much of a provider error runTurn sends (in UTF-16 characters).
 * The body keeps its first 64 Ki and last 8 Ki characters: the window
 * fledger's classifier reads of any one field (commands/classify/text.go
 * scanHead/scanTail), so the cut does not change the classification of an
 * ASCII body; the server stores only 300-character redacted previews. The
 * message keeps 8 Ki + 1 Ki, every cause (at most `causes` deep) 8 Ki + 1 Ki
 * of its message and of its body, and each of the short fields (code, type,
 * name, provider, model, a header) `field` characters. Whatever is cut is
 * replaced by a marker line "…[cut N characters]…".
 */
export const reportLimits = {
  bodyHead: 64 << 10,
  bodyTail: 8 << 10,
  messageHead: 8 << 10,
  messageTail: 1 << 10,
  causeHead: 8 << 10,
  causeTail: 1 << 10,
  causes: 4,
  field: 512,
  headers: 32,
  /** The message of the minimal report sent when the full one is refused (400/413). */
  minimalMessage: 1 << 10,
} as const;

/**
 * Thrown by a call function to report a provider error as it is, with
 * whether output or a tool call had started (the attempt is then never
 * retried). Any other thrown value is reported through
 * {@link toProviderError}. The error is bounded like any other.
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

/**
 * The ProviderError fields of a thrown value: an SDK error's status,
 * code, type, message, name, body (or error), headers (a Headers or a
 * plain object) and cause, as fledger classifies them; cut to
 * {@link reportLimits} and made plain JSON (cycles become "[Circular]",
 * BigInts decimal strings, functions and symbols are dropped). It never
 * throws.
 */
export function toProviderError(err: unknown, depth = 0): ProviderError {
  try {
    return providerError(err, depth);
  } catch (e) {
    return { message: `unreadable provider error (${describe(e)})` };
  }
}

function providerError(err: unknown, depth: number): ProviderError {
  if (err instanceof ProviderCallError) return providerError(err.error, depth);
  const head = depth === 0 ? reportLimits.messageHead : reportLimits.causeHead;
  const tail = depth === 0 ? reportLimits.messageTail : reportLimits.causeTail;
  if (typeof err !== "object" || err === null) return { message: cut(describe(err), head, tail) };
  const get = (k: string): unknown => {
    try {
      return (err as Record<string, unknown>)[k];
    } catch {
      return undefined; // a throwing getter
    }
  };
  const out: ProviderError = {};
  const status = statusOf(get("status")) ?? statusOf(get("statusCode"));
  if (status !== undefined) out.status = status;
  const code = get("code");
  if (typeof code === "string") out.code = field(code);
  else if (typeof code === "number" && Number.isFinite(code)) out.code = code;
  for (const k of ["type", "name", "provider", "model"] as const) {
    const v = get(k);
    if (typeof v === "string") out[k] = field(v);
  }
  const message = bounded(get("message"), head, tail);
  if (message !== undefined) out.message = message;
  const rawBody = get("body") ?? get("error");
  if (!(rawBody instanceof Error)) {
    const body = depth === 0
      ? bounded(rawBody, reportLimits.bodyHead, reportLimits.bodyTail)
      : bounded(rawBody, reportLimits.causeHead, reportLimits.causeTail);
    if (body !== undefined) out.body = body;
  }
  const headers = headerRecord(get("headers"));
  if (headers) out.headers = headers;
  const cause = get("cause");
  if (cause !== undefined && cause !== null && depth < reportLimits.causes) out.cause = providerError(cause, depth + 1);
  return out;
}

/** A status fledger accepts: an integer 0–999, or a non-numeric string (a gRPC-style code). */
function statusOf(v: unknown): number | string | undefined {
  if (typeof v === "bigint") v = Number(v);
  if (typeof v === "number") return Number.isInteger(v) && v >= 0 && v <= 999 ? v : undefined;
  if (typeof v !== "string") return undefined;
  const t = v.trim();
  if (/^[+-]?\d+$/.test(t)) {
    const n = Number(t);
    return n >= 0 && n <= 999 ? n : undefined;
  }
  return t === "" ? undefined : field(t);
}

function headerRecord(h: unknown): Record<string, string> | undefined {
  if (typeof h !== "object" || h === null) return undefined;
  const out: Record<string, string> = {};
  const entries = h instanceof Headers ? [...h.entries()] : Object.entries(h);
  let n = 0;
  for (const [k, v] of entries) {
    if (n >= reportLimits.headers) break;
    if (typeof v !== "string" && typeof v !== "number") continue;
    out[field(k.toLowerCase())] = field(String(v));
    n++;
  }
  return out;
}

/**
 * A message or body as sent: a string cut to head + tail characters, or
 * another value as plain JSON (itself when its JSON text fits, else that
 * text cut); undefined for undefined, a function or a symbol.
 */
function bounded(v: unknown, head: number, tail: number): unknown {
  if (v === undefined || v === null) return undefined;
  if (typeof v === "string") return cut(v, head, tail);
  const text = safeJSON(v, head + tail);
  if (text === undefined) return undefined;
  return text.length <= head + tail ? JSON.parse(text) : cut(text, head, tail);
}

/**
 * JSON.stringify that never throws: a reference to an enclosing object is
 * written "[Circular]", a BigInt as its decimal string, a string longer
 * than maxString is cut; functions and symbols are dropped as JSON drops
 * them. A value that still cannot be written (a throwing toJSON or getter,
 * nesting too deep for the stack) is written as a string saying so.
 */
export function safeJSON(v: unknown, maxString = Infinity): string | undefined {
  const ancestors: unknown[] = [];
  try {
    return JSON.stringify(v, function (this: unknown, _key: string, x: unknown): unknown {
      if (typeof x === "bigint") return x.toString();
      if (typeof x === "function" || typeof x === "symbol") return undefined;
      if (typeof x === "string") return x.length > maxString ? cut(x, maxString, 0) : x;
      if (typeof x !== "object" || x === null) return x;
      while (ancestors.length > 0 && ancestors[ancestors.length - 1] !== this) ancestors.pop();
      if (ancestors.includes(x)) return "[Circular]";
      ancestors.push(x);
      return x;
    });
  } catch (e) {
    return JSON.stringify(`[unserialisable: ${cut(describe(e), 200, 0)}]`);
  }
}

/** s with at most head + tail characters: its start and end around a marker, never splitting a surrogate pair. */
export function cut(s: string, head: number, tail: number): string {
  if (s.length <= head + tail) return s;
  let h = head;
  if (h > 0 && isHigh(s.charCodeAt(h - 1))) h--;
  let t = s.length - tail;
  if (tail > 0 && isLow(s.charCodeAt(t))) t++;
  return `${s.slice(0, h)}\n…[cut ${t - h} characters]…\n${tail > 0 ? s.slice(t) : ""}`;
}

const isHigh = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff;

const field = (s: string): string => cut(s, reportLimits.field, 0);

/** A thrown value in words, whatever it is. */
function describe(v: unknown): string {
  try {
    if (v instanceof Error) return `${v.name}: ${v.message}`;
    return String(v);
  } catch {
    return Object.prototype.toString.call(v);
  }
}

/**
 * The smallest report of a failed attempt: the error's status, code and
 * message (cut to reportLimits.minimalMessage), sent when the server
 * refuses the full report (400, 413), so the attempt is recorded whatever
 * the error's shape.
 */
export function minimalError(e: ProviderError): ProviderError {
  const out: ProviderError = {};
  if (e.status !== undefined) out.status = e.status;
  if (e.code !== undefined) out.code = e.code;
  if (e.message !== undefined) {
    const m = typeof e.message === "string" ? e.message : (safeJSON(e.message) ?? "");
    out.message = cut(m, reportLimits.minimalMessage, 0);
  }
  return out;
}
