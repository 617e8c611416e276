// The read API of schemas/openapi.v1.yaml the page uses, and the one place
// that calls it: every /v1 call carries the bearer token the user typed
// (kept in this module's memory only, never in storage), and a 401 asks
// for it through the token form, then retries.

export type Outcome = "first_try" | "rotated" | "fell_back" | "exhausted" | "stopped" | "switched" | "running";

export interface Window {
  state: "cooldown" | "disabled" | "blocked" | string;
  reason: string;
  model: string;
  source?: string;
  from: string;
  until: string;
  ended_at?: string;
  set_seq: number;
  cleared_seq: number;
}

export interface ProfileLane {
  profile_id: string;
  provider: string;
  windows: Window[];
}

export interface TurnMark {
  turn_id: string;
  session: string;
  outcome: Outcome | string;
  reason?: string;
  started_at: string;
  ended_at?: string;
  requested_model: string;
  final_model: string;
  final_profile: string;
  attempts: number;
  start_seq: number;
  end_seq: number;
}

export interface Timeline {
  agent: string;
  since?: string;
  until?: string;
  ledger_first?: string;
  ledger_last?: string;
  last_seq: number;
  profiles: ProfileLane[];
  turns: TurnMark[];
  truncated: boolean;
}

export interface Step {
  seq: number;
  index: number;
  at: string;
  offset: string;
  kind: string;
  type: string;
  text: string;
  details?: string[];
}

export interface Explanation {
  agent: string;
  turn_id: string;
  session: string;
  chat: string;
  started_at: string;
  config_hash: string;
  requested: string;
  selection_source: string;
  strict: boolean;
  why: string;
  chain: { position: number; model: string; route_origin: string; label?: string }[];
  attempt_limit: number;
  pinned_profile?: string;
  pin_source?: string;
  steps: Step[];
  notices: { kind: string; text: string; delivered: boolean }[] | null;
  outcome: string;
  end: string;
  attempts: number;
  duration_ms: number;
  answered_by?: string;
  profile?: string;
}

export interface Decision {
  seq: number;
  idx: number;
  time: string;
  agent: string;
  turnId?: string;
  sessionId?: string;
  decision: string;
  requestedProvider?: string;
  requestedModel?: string;
  candidateProvider?: string;
  candidateModel?: string;
  attempt?: number;
  total?: number;
  reason?: string;
  status?: number;
  code?: string;
  nextCandidateProvider?: string;
  nextCandidateModel?: string;
}

export interface DecisionsView {
  decisions: Decision[];
  next_from_seq: number;
  checkpoint: number;
}

// A changed turn as the page lists it, read from either shape of the
// what-if answer (the flat contract fields or replay's TurnComparison).
export interface ChangedTurn {
  turn_id: string;
  session: string;
  recorded_outcome: string;
  what_if_outcome: string;
  recorded_model: string;
  what_if_model: string;
  unknown: boolean;
  recorded_end?: string;
  what_if_end?: string;
}

export interface WhatIfView {
  config_hash?: string;
  turns?: number;
  unknown?: number;
  changed: ChangedTurn[];
}

export class APIError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

let token = "";
let asking: Promise<void> | null = null;
let askToken: (why: string) => Promise<string> = () => Promise.reject(new Error("no token form"));

// setTokenAsker installs the form that asks the user for the token.
export function setTokenAsker(f: (why: string) => Promise<string>): void {
  askToken = f;
}

export function hasToken(): boolean {
  return token !== "";
}

// MAX_BODY_BYTES is the server's request body limit (serve's
// DefaultMaxBodyBytes, 1 MiB): a what-if config over it is refused here,
// before it is read or sent.
export const MAX_BODY_BYTES = 1 << 20;

async function call<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  for (;;) {
    const headers: Record<string, string> = { Accept: "application/json" };
    if (token) headers.Authorization = "Bearer " + token;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal });
    if (res.status === 401) {
      const why = token ? "The token was refused; type it again." : "This server needs a token for its API.";
      if (!asking) {
        asking = askToken(why).then((t) => {
          token = t;
        });
        asking.finally(() => {
          asking = null;
        });
      }
      await asking;
      continue;
    }
    const text = await res.text();
    let data: unknown = undefined;
    try {
      data = text ? JSON.parse(text) : undefined;
    } catch {
      data = undefined;
    }
    if (!res.ok) {
      // ErrorBody: {"error": code, "detail": words}.
      const e = data as { error?: string; detail?: string } | undefined;
      throw new APIError(res.status, e?.error ?? String(res.status), `${e?.detail ?? (text.trim() || res.statusText)} (${res.status}${e?.error ? " " + e.error : ""})`);
    }
    return data as T;
  }
}

function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== "") q.set(k, String(v));
  }
  const s = q.toString();
  return s ? "?" + s : "";
}

export function health(): Promise<{ agents?: string[]; last_seq?: number }> {
  return call("GET", "/healthz");
}

// timeline reads the timeline; absent or null lists (an empty ledger
// answers "profiles": null) are read as empty.
export async function timeline(agent: string, since?: string, until?: string): Promise<Timeline> {
  const tl = (await call<Timeline | undefined>("GET", "/v1/timeline" + query({ agent, since, until }))) ?? ({ agent, last_seq: 0, truncated: false } as Timeline);
  tl.profiles = (tl.profiles ?? []).map((p) => ({ ...p, windows: p.windows ?? [] }));
  tl.turns = tl.turns ?? [];
  return tl;
}

export async function explanation(agent: string, turnID: string): Promise<Explanation> {
  const x = await call<Explanation>("GET", `/v1/turns/${encodeURIComponent(turnID)}/explanation` + query({ agent }));
  x.chain = x.chain ?? [];
  x.steps = x.steps ?? [];
  return x;
}

export interface DecisionFilter {
  agent: string;
  since?: string;
  until?: string;
  provider?: string;
  reason?: string;
  outcome?: string;
  from_seq?: number;
}

export async function decisions(f: DecisionFilter): Promise<DecisionsView> {
  const d = await call<DecisionsView>("GET", "/v1/decisions" + query({ ...f, limit: 500 }));
  return { ...d, decisions: d?.decisions ?? [] };
}

interface rawPath {
  chain?: string[];
  outcome?: string;
  end?: string;
  unknown_from?: number;
}

interface rawChanged {
  turn_id: string;
  session?: string;
  recorded_outcome?: string;
  what_if_outcome?: string;
  recorded_model?: string;
  what_if_model?: string;
  unknown?: boolean;
  recorded?: rawPath;
  what_if?: rawPath;
}

export async function whatIf(agent: string, config: string, since?: string, until?: string, signal?: AbortSignal): Promise<WhatIfView> {
  const raw = await call<{ config_hash?: string; turns?: number; unknown?: number; changed?: rawChanged[] | null }>(
    "POST",
    "/v1/what-if",
    { agent: agent || undefined, config, since, until },
    signal,
  );
  const changed = (raw.changed ?? []).map(
    (c): ChangedTurn => ({
      turn_id: c.turn_id,
      session: c.session ?? "",
      recorded_outcome: c.recorded_outcome ?? c.recorded?.outcome ?? "",
      what_if_outcome: c.what_if_outcome ?? c.what_if?.outcome ?? "",
      recorded_model: c.recorded_model ?? "",
      what_if_model: c.what_if_model ?? "",
      unknown: c.unknown ?? ((c.what_if?.unknown_from ?? 0) > 0 || c.what_if?.outcome === "unknown"),
      recorded_end: c.recorded?.end,
      what_if_end: c.what_if?.end,
    }),
  );
  return { config_hash: raw.config_hash, turns: raw.turns, unknown: raw.unknown, changed };
}
