// FledgerClient: a typed HTTP client of `fledger serve`
// (schemas/openapi.v1.yaml). Every request and response type comes from
// the generated src/schema.d.ts (`npm run generate`), so a change of the
// spec reaches the client by regenerating; nothing here spells a schema
// out by hand. Node 20's global fetch; no runtime dependency.

import type { components, operations } from "./schema.js";

/** The spec's component schemas. */
export type Schemas = components["schemas"];
export type TurnStep = Schemas["TurnStep"];
/** What the gateway does now: a union discriminated by `action`. */
export type Next = Schemas["Next"];
export type NextCall = Extract<Next, { action: "call" }>;
export type NextWait = Extract<Next, { action: "wait" }>;
export type NextDone = Extract<Next, { action: "done" }>;
export type NextExhausted = Extract<Next, { action: "exhausted" }>;
export type NextStop = Extract<Next, { action: "stop" }>;
/** The user selected a model outside the chain mid-turn: run the same turn again on it. */
export type NextSwitch = Extract<Next, { action: "switch" }>;
export type Notice = Next["notices"][number];
export type ProviderError = Schemas["ProviderError"];
export type ErrorBody = Schemas["ErrorBody"];
/**
 * The code of a refusal: the server's ErrorBody.error, or http_<status>
 * when the answer was not an ErrorBody (a proxy's page, say).
 */
export type ErrorCode = ErrorBody["error"] | `http_${number}`;

type JSONContent<R> = R extends { content: { "application/json": infer B } } ? B : never;
/** The JSON body of operation K's 200 answer. */
export type Result<K extends keyof operations> = JSONContent<operations[K]["responses"][200]>;
/** The JSON request body of operation K. */
export type RequestBody<K extends keyof operations> = JSONContent<NonNullable<operations[K]["requestBody"]>>;
/** The query parameters of operation K. */
export type Query<K extends keyof operations> = NonNullable<operations[K]["parameters"]["query"]>;

/** A refused request: the server's status and its ErrorBody. */
export class FledgerError extends Error {
  override readonly name = "FledgerError";
  /** The HTTP status (400, 401, 404, 405, 409, 413, 415, 422, 425, 500, 503 …). */
  readonly status: number;
  /** The stable machine-readable code: ErrorBody.error, e.g. `unknown_turn`. */
  readonly code: ErrorCode;
  readonly detail: string;
  /** The answer's ErrorBody (undefined when the answer was not one). */
  readonly body: ErrorBody | undefined;
  /** The Retry-After header in ms, when the answer had one. */
  readonly retryAfterMs: number | undefined;

  constructor(status: number, body: ErrorBody | undefined, detail: string, retryAfterMs?: number) {
    const code: ErrorCode = body?.error ?? `http_${status}`;
    super(`fledger: ${status} ${code}: ${detail}`);
    this.status = status;
    this.code = code;
    this.detail = detail;
    this.body = body;
    this.retryAfterMs = retryAfterMs;
  }
}

export interface FledgerClientOptions {
  /** The server's base URL (default http://127.0.0.1:7400). */
  baseUrl?: string;
  /** Bearer token, when the server runs with --token. */
  token?: string;
  /** How long one request may take before its answer counts as lost (default 30 s). */
  timeoutMs?: number;
  /** How many times a request is sent at most when it may be re-sent (default 5). */
  maxTries?: number;
  /**
   * The fetch to use (default the global fetch). A path with a "." or ".."
   * segment, which fetch cannot send, goes through node:http(s) instead.
   */
  fetch?: typeof fetch;
}

/** Per-request options. */
export interface RequestOptions {
  /**
   * Cancels the request: an abort rejects it at once with the signal's
   * reason (a signal aborted before the call sends nothing), ends a wait
   * between re-sends, and is never re-sent.
   */
  signal?: AbortSignal;
}

/** Low-level request options (see {@link FledgerClient.request}). */
export interface SendOptions extends RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  /** JSON-encoded as the body unless it is a string (sent as is). */
  body?: unknown;
  /** Content-Type of the body (default application/json). */
  contentType?: string;
  /**
   * Whether re-sending the same request records it at most once. Such a
   * request is re-sent after a lost answer (network error, timeout) and
   * after 503 unavailable with `recorded: unknown`; any request is re-sent
   * after 503 contention and 503 unavailable with `recorded: no`, where
   * nothing was recorded.
   */
  idempotent?: boolean;
  /** Statuses answered with a body of the result type rather than ErrorBody (health: 503). */
  okStatuses?: number[];
  /** Read the answer as text rather than JSON. */
  text?: boolean;
}

/**
 * One path segment: percent-encoded with encodeURIComponent, and "." and
 * ".." (which encodeURIComponent leaves as they are, and a URL resolves
 * away) as "%2E" and "%2E%2E", which fledger serve decodes back to the
 * name. A path holding such a segment is sent by {@link rawPathFetch}.
 */
export function pathSegment(s: string): string {
  if (s === ".") return "%2E";
  if (s === "..") return "%2E%2E";
  return encodeURIComponent(s);
}

const seg = pathSegment;

/**
 * Whether a path has a segment a WHATWG URL (and so fetch) removes: ".",
 * "..", or their percent-encoded forms ("%2E", ".%2e", "%2E%2E", …).
 */
export function hasDotSegment(path: string): boolean {
  return path.split("/").some((s) => /^(?:\.|%2e){1,2}$/i.test(s));
}

/** Whether err is fetch's own failure (a lost answer), not a refusal or the caller's abort. */
function lostAnswer(err: unknown, signal: AbortSignal | undefined): boolean {
  if (signal?.aborted) return false;
  return err instanceof TypeError || (err instanceof DOMException && err.name === "TimeoutError");
}

function retryAfterMs(h: string | null): number | undefined {
  if (h === null || h.trim() === "") return undefined;
  const s = Number(h);
  if (Number.isFinite(s) && s >= 0) return s * 1000;
  const at = Date.parse(h);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** Resolves after ms, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, Math.max(0, ms));
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** A typed client of every operation of `fledger serve` (docs/api.md). */
export class FledgerClient {
  readonly baseUrl: string;
  /** How long one request may take before its answer counts as lost. */
  readonly timeoutMs: number;
  readonly #token: string | undefined;
  readonly #maxTries: number;
  readonly #fetch: typeof fetch;

  constructor(opts: FledgerClientOptions = {}) {
    this.baseUrl = (opts.baseUrl ?? "http://127.0.0.1:7400").replace(/\/+$/, "");
    this.#token = opts.token;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.#maxTries = Math.max(1, opts.maxTries ?? 5);
    this.#fetch = opts.fetch ?? globalThis.fetch;
  }

  /** POST /v1/turns. Re-sent when it names its turn_id (a re-sent begin returns the current step). */
  beginTurn(body: RequestBody<"beginTurn">, opts?: RequestOptions): Promise<Result<"beginTurn">> {
    return this.request("POST", "/v1/turns", { ...opts, body, idempotent: body.turn_id !== undefined && body.turn_id !== "" });
  }

  /** POST /v1/turns/{turn_id}/outcomes (idempotent per attempt). */
  reportOutcome(turnId: string, body: RequestBody<"reportOutcome">, opts?: RequestOptions): Promise<Result<"reportOutcome">> {
    return this.request("POST", `/v1/turns/${seg(turnId)}/outcomes`, { ...opts, body, idempotent: true });
  }

  /** POST /v1/turns/{turn_id}/resume (idempotent). Early by more than 1 s: FledgerError 425 with retryAfterMs. */
  resumeTurn(turnId: string, body?: RequestBody<"resumeTurn">, opts?: RequestOptions): Promise<Result<"resumeTurn">> {
    return this.request("POST", `/v1/turns/${seg(turnId)}/resume`, { ...opts, body: body ?? {}, idempotent: true });
  }

  /** GET /v1/turns/{turn_id}. */
  getTurn(turnId: string, query?: Query<"getTurn">, opts?: RequestOptions): Promise<Result<"getTurn">> {
    return this.request("GET", `/v1/turns/${seg(turnId)}`, { ...opts, query, idempotent: true });
  }

  /** GET /v1/sessions/{agent}/{session}. */
  getSession(agent: string, session: string, opts?: RequestOptions): Promise<Result<"getSession">> {
    return this.request("GET", `/v1/sessions/${seg(agent)}/${seg(session)}`, { ...opts, idempotent: true });
  }

  /** POST /v1/sessions/{agent}/{session}/model: `/model provider/model[@profile]` or `/model default`. */
  selectModel(agent: string, session: string, body: RequestBody<"selectModel">, opts?: RequestOptions): Promise<Result<"selectModel">> {
    return this.request("POST", `/v1/sessions/${seg(agent)}/${seg(session)}/model`, { ...opts, body });
  }

  /** POST /v1/sessions/{agent}/{session}/reset: `/new` or `/reset`. */
  resetSession(agent: string, session: string, body?: RequestBody<"resetSession">, opts?: RequestOptions): Promise<Result<"resetSession">> {
    return this.request("POST", `/v1/sessions/${seg(agent)}/${seg(session)}/reset`, { ...opts, body: body ?? {} });
  }

  /** POST /v1/sessions/{agent}/{session}/pin. */
  pinProfile(agent: string, session: string, body: RequestBody<"pinProfile">, opts?: RequestOptions): Promise<Result<"pinProfile">> {
    return this.request("POST", `/v1/sessions/${seg(agent)}/${seg(session)}/pin`, { ...opts, body });
  }

  /** POST /v1/sessions/{agent}/{session}/compaction. */
  completeCompaction(agent: string, session: string, opts?: RequestOptions): Promise<Result<"completeCompaction">> {
    return this.request("POST", `/v1/sessions/${seg(agent)}/${seg(session)}/compaction`, { ...opts, body: {} });
  }

  /** POST /v1/agents/{agent}/auth/order/{provider}: store (or, with no profiles, clear) the order. */
  setAuthOrder(agent: string, provider: string, body?: RequestBody<"setAuthOrder">, opts?: RequestOptions): Promise<Result<"setAuthOrder">> {
    return this.request("POST", `/v1/agents/${seg(agent)}/auth/order/${seg(provider)}`, { ...opts, body: body ?? {} });
  }

  /** GET /v1/profiles. */
  listProfiles(query?: Query<"listProfiles">, opts?: RequestOptions): Promise<Result<"listProfiles">> {
    return this.request("GET", "/v1/profiles", { ...opts, query, idempotent: true });
  }

  /** GET /v1/decisions. */
  listDecisions(query?: Query<"listDecisions">, opts?: RequestOptions): Promise<Result<"listDecisions">> {
    return this.request("GET", "/v1/decisions", { ...opts, query, idempotent: true });
  }

  /** GET /healthz: the health body, on 200 and on 503 alike. */
  health(opts?: RequestOptions): Promise<Result<"health">> {
    return this.request("GET", "/healthz", { ...opts, idempotent: true, okStatuses: [503] });
  }

  /** GET /readyz: the health body, on 200 and on 503 alike. */
  ready(opts?: RequestOptions): Promise<Result<"ready">> {
    return this.request("GET", "/readyz", { ...opts, idempotent: true, okStatuses: [503] });
  }

  /** GET /metrics: the Prometheus text exposition. */
  metrics(opts?: RequestOptions): Promise<string> {
    return this.request("GET", "/metrics", { ...opts, idempotent: true, text: true });
  }

  /**
   * Sends one request, re-sending it (at most maxTries times in all) where
   * that cannot record it twice (see SendOptions.idempotent). A refusal
   * rejects with FledgerError; a lost answer that is not re-sent rejects
   * with fetch's error; an abort of opts.signal rejects with its reason.
   */
  async request<T>(method: string, path: string, opts: SendOptions = {}): Promise<T> {
    opts.signal?.throwIfAborted();
    const url = new URL(this.baseUrl);
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(opts.query ?? {})) {
      if (v !== undefined) params.set(k, String(v));
    }
    const query = params.toString();
    const target = url.pathname.replace(/\/+$/, "") + path + (query === "" ? "" : `?${query}`);
    const href = url.origin + target;
    // fetch would resolve a "." or ".." segment away and reach another
    // route; such a path goes out as it is, through node:http(s).
    const send = hasDotSegment(path) ? rawPathFetch(url, target) : this.#fetch;
    const headers: Record<string, string> = { Accept: "application/json" };
    if (this.#token !== undefined && this.#token !== "") headers.Authorization = `Bearer ${this.#token}`;
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body);
      headers["Content-Type"] = opts.contentType ?? "application/json";
    }
    for (let attempt = 1; ; attempt++) {
      const last = attempt >= this.#maxTries;
      const timeout = AbortSignal.timeout(this.timeoutMs);
      let res: Response;
      let text: string;
      try {
        res = await send(href, {
          method,
          headers,
          body,
          signal: opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout,
        });
        text = await res.text();
      } catch (err) {
        if (opts.signal?.aborted) throw opts.signal.reason;
        if (last || !opts.idempotent || !lostAnswer(err, opts.signal)) throw err;
        await sleep(backoffMs(attempt), opts.signal);
        continue;
      }
      if (res.ok || opts.okStatuses?.includes(res.status)) {
        return (opts.text ? text : JSON.parse(text)) as T;
      }
      const eb = errorBody(text);
      const err = new FledgerError(res.status, eb, eb?.detail ?? text.slice(0, 500), retryAfterMs(res.headers.get("Retry-After")));
      if (last || !resendable(err, opts.idempotent === true)) throw err;
      await sleep(err.retryAfterMs ?? backoffMs(attempt), opts.signal);
    }
  }
}

type Send = (href: string, init: { method: string; headers: Record<string, string>; body: string | undefined; signal: AbortSignal }) => Promise<Response>;

/**
 * A fetch that sends the request target as given, through node:http or
 * node:https (imported when first needed): the only way to reach a path
 * with a "%2E" or "%2E%2E" segment, which fetch's URL parsing resolves
 * away. It fails as fetch does: TypeError on a network error, the
 * signal's reason on an abort or timeout.
 */
function rawPathFetch(base: URL, target: string): Send {
  return async (_href, init) => {
    const http = base.protocol === "https:" ? await import("node:https") : await import("node:http");
    init.signal.throwIfAborted();
    return new Promise<Response>((resolve, reject) => {
      const req = http.request(
        {
          protocol: base.protocol,
          hostname: base.hostname.replace(/^\[(.*)\]$/, "$1"),
          port: base.port,
          path: target,
          method: init.method,
          headers: init.body === undefined ? init.headers : { ...init.headers, "Content-Length": String(Buffer.byteLength(init.body)) },
          signal: init.signal,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("error", fail);
          res.on("close", () => {
            if (!res.complete) fail(new Error("the connection closed before the answer ended"));
          });
          res.on("end", () => {
            const headers = new Headers();
            for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) headers.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
            const status = res.statusCode ?? 500;
            const empty = status === 204 || status === 205 || status === 304;
            resolve(new Response(empty ? null : Buffer.concat(chunks), { status, statusText: res.statusMessage ?? "", headers }));
          });
        },
      );
      function fail(err: unknown): void {
        reject(init.signal.aborted ? init.signal.reason : new TypeError("fetch failed", { cause: err }));
      }
      req.on("error", fail);
      req.end(init.body);
    });
  };
}

function backoffMs(attempt: number): number {
  return Math.min(200 * 2 ** (attempt - 1), 2_000);
}

/** Whether a refused request may be sent again as it is. */
function resendable(err: FledgerError, idempotent: boolean): boolean {
  if (err.status !== 503) return false;
  switch (err.code) {
    case "contention":
      return true;
    case "unavailable":
      return err.body?.recorded === "no" || idempotent;
    default:
      return false;
  }
}

/** The ErrorBody of an answer (undefined when the body is not one). */
function errorBody(text: string): ErrorBody | undefined {
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v === "object" && v !== null && typeof (v as { error?: unknown }).error === "string") {
      const o = v as ErrorBody;
      return { ...o, detail: typeof o.detail === "string" ? o.detail : "" };
    }
  } catch {
    // not JSON
  }
  return undefined;
}
