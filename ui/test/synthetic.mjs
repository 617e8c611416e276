// A synthetic ledger for the page alone: the page's files from ui/src and
// ui/dist and a generated /v1 API (10,000 turns, 100 profiles by default),
// served by a small node HTTP server; no fledger needed.

import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { uiRoot } from "./browser.mjs";

const OUTCOMES = ["first_try", "first_try", "first_try", "first_try", "rotated", "fell_back", "exhausted", "stopped", "switched"];

/**
 * Generates a timeline: n turns over one hour in `sessions` sessions
 * (named by sessionName), `profiles` profiles with 3 windows each.
 */
export function generate({ turns = 10000, profiles = 100, sessions = 20, sessionName = (i) => `session-${String(i).padStart(2, "0")}` } = {}) {
  let seed = 42;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  const t0 = Date.parse("2026-03-02T09:00:00.000Z");
  const hour = 3600_000;
  const iso = (t) => new Date(t).toISOString();
  const lanes = [];
  for (let p = 0; p < profiles; p++) {
    const provider = ["anthropic", "openai", "google", "mistral"][p % 4];
    const windows = [];
    let at = t0 + Math.floor(rnd() * 600_000);
    for (let w = 0; w < 3; w++) {
      const state = ["cooldown", "disabled", "blocked"][w % 3];
      const len = 30_000 + Math.floor(rnd() * 900_000);
      const from = at;
      const until = from + len;
      windows.push({
        state,
        reason: state === "cooldown" ? "rate_limit" : state === "disabled" ? "billing" : "subscription_limit",
        model: w === 0 ? "claude-opus-4-6" : "",
        from: iso(from),
        until: iso(until),
        ended_at: iso(until),
        set_seq: 100 + p * 10 + w,
        cleared_seq: 0,
      });
      at = until + Math.floor(rnd() * 600_000);
    }
    lanes.push({ profile_id: `${provider}:key-${String(p).padStart(3, "0")}`, provider, windows });
  }
  lanes.sort((a, b) => (a.provider + a.profile_id < b.provider + b.profile_id ? -1 : 1));
  const list = [];
  for (let i = 0; i < turns; i++) {
    const start = t0 + Math.floor((i / turns) * hour);
    const outcome = OUTCOMES[Math.floor(rnd() * OUTCOMES.length)];
    list.push({
      turn_id: `t${String(i).padStart(5, "0")}`,
      session: sessionName(i % sessions),
      outcome,
      started_at: iso(start),
      ended_at: iso(start + 1500),
      requested_model: "anthropic/claude-opus-4-6",
      final_model: outcome === "fell_back" ? "openai/gpt-5" : outcome === "exhausted" || outcome === "stopped" ? "" : "anthropic/claude-opus-4-6",
      final_profile: "",
      attempts: outcome === "first_try" ? 1 : 3,
      start_seq: 1000 + i * 4,
      end_seq: 1003 + i * 4,
    });
  }
  return { t0, t1: t0 + hour, profiles: lanes, turns: list };
}

/**
 * Serves the page's files at /ui/* and the generated data at /v1/* from a
 * node HTTP server on a free loopback port (a real socket, as from
 * fledger); `token` set: every /v1 call without "Bearer token" answers
 * 401. Resolves { base, seen, close }: seen lists the /v1 requests
 * (method, path, authorization). empty: /v1/timeline answers an empty
 * ledger as the server may ("profiles": null, no range). POST
 * /v1/what-if answers only when the client goes away (whatIf.aborted
 * counts those) or after 20 s; GET /v1/turns/{id}/explanation answers a
 * small explanation.
 */
export async function serveSynthetic(data, { token = "", empty = false } = {}) {
  const seen = [];
  const whatIf = { started: 0, aborted: 0 };
  const types = { ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".html": "text/html; charset=utf-8" };
  const server = createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    const send = (status, body, type) => {
      res.writeHead(status, { "Content-Type": type });
      res.end(body);
    };
    if (url.pathname.startsWith("/ui/")) {
      const name = url.pathname.slice(4) || "index.html";
      try {
        return send(200, readFileSync(join(uiRoot, name === "app.js" ? "dist" : "src", name)), types[name.slice(name.lastIndexOf("."))]);
      } catch {
        return send(404, "not found", "text/plain");
      }
    }
    const json = (status, v) => send(status, JSON.stringify(v), "application/json");
    if (url.pathname === "/healthz") return json(200, { status: "ok", agents: ["main"] });
    seen.push({ method: req.method, path: url.pathname + url.search, authorization: req.headers["authorization"] ?? "" });
    if (token && req.headers["authorization"] !== `Bearer ${token}`) return json(401, { error: "unauthorized", detail: "a valid Authorization: Bearer <token> header is required" });
    if (url.pathname === "/v1/timeline" && empty) return json(200, { agent: "main", since: null, until: null, last_seq: 0, profiles: null, turns: null, truncated: false });
    if (url.pathname === "/v1/what-if") {
      whatIf.started++;
      const t = setTimeout(() => json(200, { turns: 0, changed: [] }), 20_000);
      res.once("close", () => {
        if (!res.writableEnded) whatIf.aborted++;
        clearTimeout(t);
      });
      return;
    }
    const turn = /^\/v1\/turns\/([^/]+)\/explanation$/.exec(url.pathname);
    if (turn) {
      const id = decodeURIComponent(turn[1]);
      const tm = data.turns.find((x) => x.turn_id === id);
      if (!tm) return json(404, { error: "not_found", detail: `no turn ${id}` });
      return json(200, { agent: "main", turn_id: id, session: tm.session, chat: "", started_at: tm.started_at, config_hash: "sha256:0", requested: tm.requested_model, selection_source: "default", strict: false, why: "default model", chain: null, attempt_limit: 3, steps: null, notices: null, outcome: "succeeded", end: "answered", attempts: tm.attempts, duration_ms: 1500 });
    }
    if (url.pathname === "/v1/timeline") {
      const since = Date.parse(url.searchParams.get("since") ?? "") || data.t0;
      const until = Date.parse(url.searchParams.get("until") ?? "") || data.t1;
      const iso = (t) => new Date(t).toISOString();
      return json(200, {
        agent: "main",
        since: iso(since),
        until: iso(until),
        ledger_first: iso(data.t0),
        ledger_last: iso(data.t1),
        last_seq: 1000 + data.turns.length * 4,
        profiles: data.profiles.map((p) => ({ ...p, windows: p.windows.filter((w) => Date.parse(w.until) >= since && Date.parse(w.from) <= until) })),
        turns: data.turns.filter((t) => Date.parse(t.started_at) >= since && Date.parse(t.started_at) <= until),
        truncated: false,
      });
    }
    if (url.pathname === "/v1/decisions") return json(200, { decisions: [], next_from_seq: 1, checkpoint: 0 });
    return json(404, { error: "not_found", detail: `no route ${req.method} ${url.pathname}` });
  });
  await new Promise((done) => server.listen(0, "127.0.0.1", done));
  return {
    base: `http://127.0.0.1:${server.address().port}`,
    seen,
    whatIf,
    close: () => new Promise((done) => server.close(done)),
  };
}
