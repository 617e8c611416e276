// The incident viewer page: wires the range form, the timeline, the turn
// view, the decisions table and the what-if panel to the read API.

import * as api from "./api";
import { decisionRows, DECISION_HEAD } from "./decisions";
import { byId, count, h } from "./dom";
import { GroupBy, legend, TimelineView } from "./timeline";
import { renderTurn } from "./turn";

interface State {
  agent: string;
  since?: string;
  until?: string;
  // asked is the range the user asked for (undefined: the last hour of
  // the ledger), the one the URL keeps.
  asked: { since?: string; until?: string };
  drawnWidth?: number;
  whatIf?: AbortController;
  // search is the URL's query of the view shown.
  search?: string;
  tl?: api.Timeline;
  nextFromSeq?: number;
  opener?: HTMLElement | null;
}

const st: State = { agent: "", asked: {} };
const status = byId("status");
const say = (s: string) => (status.textContent = s);

declare global {
  interface Window {
    fledgerViewer: { renders: { turns: number; profiles: number; elements: number; aggregated: number; ms: number; buildMs: number; fetchMs: number; at: number }[] };
  }
}
window.fledgerViewer = { renders: [] };

function tokenAsker(why: string): Promise<string> {
  const dlg = byId("token-dialog");
  const form = byId<HTMLFormElement>("token-form");
  const input = byId<HTMLInputElement>("token");
  byId("token-why").textContent = why;
  dlg.hidden = false;
  input.value = "";
  input.focus();
  return new Promise((resolve) => {
    form.onsubmit = (e) => {
      e.preventDefault();
      if (!input.value) return;
      dlg.hidden = true;
      form.onsubmit = null;
      resolve(input.value);
    };
  });
}

const view = new TimelineView(byId("timeline"), {
  openTurn: (id) => void openTurn(id),
  zoom: (since, until) => void load(since, until),
});

function groupBy(): GroupBy {
  return byId<HTMLSelectElement>("group").value as GroupBy;
}

// width is the room inside the timeline's box (its clientWidth leaves out
// the border and a vertical scrollbar), so the chart fits it.
function width(): number {
  return byId("timeline").clientWidth || document.documentElement.clientWidth - 34;
}

// draw redraws the timeline in hand (lanes regrouped, box resized).
function draw(): void {
  if (!st.tl) return;
  st.drawnWidth = width();
  view.render(st.tl, groupBy(), st.drawnWidth);
}

// The view in the URL: agent, the range asked for, the lane grouping and
// the decision filters in the query (the open turn in the hash), so a
// link reproduces the view and back/forward walk the ranges and filters.
function viewURL(): string {
  const q = new URLSearchParams();
  const put = (k: string, v: string | undefined) => v && q.set(k, v);
  put("agent", st.agent);
  put("since", st.asked.since);
  put("until", st.asked.until);
  if (groupBy() !== "session") q.set("group", groupBy());
  put("provider", byId<HTMLInputElement>("f-provider").value.trim());
  put("reason", byId<HTMLSelectElement>("f-reason").value);
  put("outcome", byId<HTMLSelectElement>("f-outcome").value);
  const qs = q.toString();
  return location.pathname + (qs ? "?" + qs : "") + location.hash;
}

// remember records the view in the URL: a new history entry when it
// changed (push), else in place.
function remember(push: boolean): void {
  const url = viewURL();
  st.search = location.search;
  if (url === location.pathname + location.search + location.hash) return;
  if (push) history.pushState(null, "", url);
  else history.replaceState(null, "", url);
  st.search = location.search;
}

// fromURL sets the controls from the URL's query; it returns the range.
function fromURL(): { since?: string; until?: string } {
  const p = new URLSearchParams(location.search);
  byId<HTMLInputElement>("f-provider").value = p.get("provider") ?? "";
  byId<HTMLSelectElement>("f-reason").value = p.get("reason") ?? "";
  byId<HTMLSelectElement>("f-outcome").value = p.get("outcome") ?? "";
  byId<HTMLSelectElement>("group").value = p.get("group") === "model" ? "model" : "session";
  const agent = p.get("agent");
  if (agent) {
    st.agent = agent;
    const sel = byId<HTMLSelectElement>("agent");
    if ([...sel.options].some((o) => o.value === agent)) sel.value = agent;
  }
  return { since: p.get("since") ?? undefined, until: p.get("until") ?? undefined };
}

async function load(since?: string, until?: string, push = true): Promise<void> {
  say("Loading the timeline…");
  const t = performance.now();
  let tl: api.Timeline;
  try {
    tl = await api.timeline(st.agent, since, until);
  } catch (e) {
    say(`Timeline: ${(e as Error).message}`);
    return;
  }
  try {
    show(tl, since, until, performance.now() - t, push);
  } catch (e) {
    say(`Timeline: the page could not draw the answer: ${(e as Error).message}`);
  }
}

function show(tl: api.Timeline, since: string | undefined, until: string | undefined, fetchMs: number, push: boolean): void {
  if (since === undefined && until === undefined) clipToLedger(tl);
  st.tl = tl;
  st.agent = tl.agent || st.agent;
  st.since = tl.since;
  st.until = tl.until;
  st.asked = { since, until };
  remember(push);
  byId<HTMLInputElement>("since").value = tl.since ?? "";
  byId<HTMLInputElement>("until").value = tl.until ?? "";
  st.drawnWidth = width();
  const r = view.render(tl, groupBy(), st.drawnWidth);
  window.fledgerViewer.renders.push({ turns: tl.turns.length, profiles: tl.profiles.length, elements: r.elements, aggregated: r.aggregated, ms: r.ms, buildMs: r.buildMs, fetchMs, at: performance.now() });
  byId("timeline").dataset.rendered = String(window.fledgerViewer.renders.length);
  if (!tl.ledger_first && tl.turns.length === 0 && tl.profiles.length === 0) {
    say(`Agent ${tl.agent || st.agent || "(default)"}: the ledger has no events for this agent (folded to seq ${tl.last_seq ?? 0}).`);
    void loadDecisions(false);
    return;
  }
  say(
    `Agent ${tl.agent}: ${count(tl.turns.length, "turn")}, ${count(tl.profiles.length, "profile")} from ${tl.since ?? "—"} to ${tl.until ?? "—"} (folded to seq ${tl.last_seq}; ledger ${tl.ledger_first ?? "—"} … ${tl.ledger_last ?? "—"})` +
      (tl.truncated ? "; truncated: narrow the range" : "") +
      (r.aggregated > 0 ? `; ${r.aggregated} aggregated bars` : ""),
  );
  void loadDecisions(false);
}

// clipToLedger fits the default range (the last hour of the ledger) to
// the ledger: it starts at the ledger's first event when the ledger is
// shorter than the hour, and ends a little (2 %) after its last event, so
// a window set by the last event is seen. No event lies in what it adds,
// so the answer is the same; a range the user asked for is drawn as asked.
function clipToLedger(tl: api.Timeline): void {
  const a = Date.parse(tl.since ?? "");
  const b = Date.parse(tl.until ?? "");
  const first = Date.parse(tl.ledger_first ?? "");
  const last = Date.parse(tl.ledger_last ?? "");
  if (![a, b, first, last].every(Number.isFinite)) return;
  const pad = Math.max(1000, (last - Math.max(a, first)) * 0.02);
  if (first - pad > a) tl.since = new Date(first - pad).toISOString();
  if (b === last) tl.until = new Date(last + pad).toISOString();
}

function shift(f: (a: number, b: number) => [number, number]): void {
  const a = Date.parse(st.since ?? "");
  const b = Date.parse(st.until ?? "");
  if (!Number.isFinite(a) || !Number.isFinite(b)) return;
  const [na, nb] = f(a, b);
  void load(new Date(na).toISOString(), new Date(nb).toISOString());
}

async function openTurn(id: string): Promise<void> {
  const sec = byId("turn-section");
  st.opener = document.activeElement as HTMLElement | null;
  say(`Loading turn ${id}…`);
  try {
    const x = await api.explanation(st.agent, id);
    sec.replaceChildren(renderTurn(x, closeTurn));
    sec.hidden = false;
    history.replaceState(null, "", location.pathname + location.search + "#turn=" + encodeURIComponent(id));
    byId("turn-title").focus();
    say(`Turn ${id}: ${x.outcome}, ${x.steps.length} steps`);
  } catch (e) {
    say(`Turn ${id}: ${(e as Error).message}`);
  }
}

// closeTurn closes the turn view (its button, or Escape) and gives the
// focus back to what opened it.
function closeTurn(): void {
  const sec = byId("turn-section");
  if (sec.hidden) return;
  sec.hidden = true;
  sec.replaceChildren();
  if (location.hash.startsWith("#turn=")) history.replaceState(null, "", location.pathname + location.search);
  if (st.opener?.isConnected) st.opener.focus();
}

async function loadDecisions(more: boolean): Promise<void> {
  const body = byId<HTMLTableElement>("decisions").tBodies[0]!;
  const note = byId("decisions-note");
  const f: api.DecisionFilter = {
    agent: st.agent,
    since: st.since,
    // The timeline's until is inclusive, the decisions' exclusive.
    until: st.until && new Date(Date.parse(st.until) + 1).toISOString(),
    provider: byId<HTMLInputElement>("f-provider").value.trim(),
    reason: byId<HTMLSelectElement>("f-reason").value,
    outcome: byId<HTMLSelectElement>("f-outcome").value,
    from_seq: more ? st.nextFromSeq : undefined,
  };
  try {
    const page = await api.decisions(f);
    const rows = decisionRows(page.decisions, (id) => void openTurn(id));
    if (more) body.append(...rows);
    else body.replaceChildren(...rows);
    st.nextFromSeq = page.next_from_seq;
    const more_ = byId("decisions-more");
    more_.hidden = page.decisions.length < 500;
    const filters = [f.provider && `provider ${f.provider}`, f.reason && `reason ${f.reason}`, f.outcome && `outcome ${f.outcome}`].filter(Boolean).join(", ");
    note.textContent = `${count(body.rows.length, "decision record")} from ${st.since ?? "the start"} to ${st.until ?? "the end"}${filters ? " with " + filters : ""}.`;
  } catch (e) {
    note.textContent = `Decisions: ${(e as Error).message}`;
  }
}

async function runWhatIf(): Promise<void> {
  const out = byId("whatif-result");
  const config = byId<HTMLTextAreaElement>("whatif-config").value;
  if (!config.trim()) {
    out.replaceChildren(h("p", { class: "error" }, "Paste or upload a config first."));
    return;
  }
  if (st.whatIf) return;
  const bytes = new TextEncoder().encode(config).length;
  if (bytes > api.MAX_BODY_BYTES - 4096) {
    out.replaceChildren(h("p", { class: "error", role: "alert" }, `The config is ${mib(bytes)}; the server takes at most ${mib(api.MAX_BODY_BYTES)} in a request. Leave out what the what-if does not need.`));
    return;
  }
  const ranged = byId<HTMLInputElement>("whatif-range").checked;
  const ctl = new AbortController();
  st.whatIf = ctl;
  whatIfBusy(true);
  out.replaceChildren(h("p", {}, "Re-deciding the recorded turns… (Cancel stops waiting)"));
  try {
    const r = await api.whatIf(st.agent, config, ranged ? st.since : undefined, ranged ? st.until : undefined, ctl.signal);
    const unknown = r.changed.filter((c) => c.unknown).length;
    const summary = h(
      "p",
      { class: "summary" },
      `${count(r.changed.length, "turn")} would change` +
        (r.turns !== undefined ? ` of ${r.turns} re-decided` : "") +
        (unknown ? `; ${unknown} reach a candidate never tried (unknown)` : "") +
        (r.config_hash ? `; config ${r.config_hash}` : "") +
        ".",
    );
    if (r.changed.length === 0) {
      out.replaceChildren(summary);
      return;
    }
    const rows = r.changed.map((c) =>
      h(
        "tr",
        {
          tabindex: "0",
          "data-turn": c.turn_id,
          class: c.unknown ? "unknown" : "",
          onclick: (() => void openTurn(c.turn_id)) as EventListener,
          onkeydown: ((e: KeyboardEvent) => {
            if (e.key === "Enter" || e.key === " ") {
              e.preventDefault();
              void openTurn(c.turn_id);
            }
          }) as EventListener,
        },
        h("td", {}, c.turn_id),
        h("td", {}, c.session),
        h("td", {}, c.recorded_outcome + (c.recorded_model ? ` (${c.recorded_model})` : "")),
        h("td", {}, c.unknown ? "? unknown" : c.what_if_outcome + (c.what_if_model ? ` (${c.what_if_model})` : "")),
        h("td", {}, c.what_if_end || (c.unknown ? "reaches a candidate the recording never tried" : "")),
      ),
    );
    out.replaceChildren(
      summary,
      h(
        "div",
        { class: "table-wrap" },
        h(
          "table",
          { id: "whatif-changed" },
          h("thead", {}, h("tr", {}, ...["turn", "session", "recorded", "what if", "note"].map((t) => h("th", { scope: "col" }, t)))),
          h("tbody", {}, ...rows),
        ),
      ),
    );
  } catch (e) {
    if (ctl.signal.aborted) out.replaceChildren(h("p", { class: "note" }, "What-if cancelled."));
    else out.replaceChildren(h("p", { class: "error", role: "alert" }, `What-if: ${(e as Error).message}`));
  } finally {
    st.whatIf = undefined;
    whatIfBusy(false);
  }
}

// whatIfBusy shows a running what-if: Run disabled and saying so, Cancel
// offered (it aborts the request).
function whatIfBusy(on: boolean): void {
  const run = byId<HTMLButtonElement>("whatif-run");
  run.disabled = on;
  run.textContent = on ? "Running…" : "Run what-if";
  byId("whatif-form").setAttribute("aria-busy", String(on));
  const cancel = byId<HTMLButtonElement>("whatif-cancel");
  cancel.hidden = !on;
  if (on) cancel.focus();
  else if (document.activeElement === document.body || document.activeElement === cancel) run.focus();
}

const mib = (n: number) => (n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MiB` : `${Math.ceil(n / 1024)} KiB`);

async function start(): Promise<void> {
  api.setTokenAsker(tokenAsker);
  byId("legend").innerHTML = legend();
  byId<HTMLTableElement>("decisions").tHead!.replaceChildren(h("tr", {}, ...DECISION_HEAD.map((t) => h("th", { scope: "col" }, t))));
  const params = new URLSearchParams(location.search);
  st.agent = params.get("agent") ?? "";
  try {
    const hz = await api.health();
    const agents = hz.agents ?? [];
    if (agents.length > 1) {
      const sel = byId<HTMLSelectElement>("agent");
      sel.replaceChildren(...agents.map((a) => h("option", { value: a }, a)));
      if (!st.agent) st.agent = agents[0]!;
      sel.value = st.agent;
      byId("agent-box").hidden = false;
      sel.onchange = () => {
        st.agent = sel.value;
        closeTurn();
        void load();
      };
    } else if (!st.agent && agents.length === 1) st.agent = agents[0]!;
  } catch {
    // No agent list: the server's default agent.
  }
  byId<HTMLFormElement>("range").onsubmit = (e) => {
    e.preventDefault();
    void load(byId<HTMLInputElement>("since").value.trim() || undefined, byId<HTMLInputElement>("until").value.trim() || undefined);
  };
  byId("zoom-in").onclick = () => shift((a, b) => [a + (b - a) / 4, b - (b - a) / 4]);
  byId("zoom-out").onclick = () => shift((a, b) => [a - (b - a) / 2, b + (b - a) / 2]);
  byId("earlier").onclick = () => shift((a, b) => [a - (b - a) / 2, b - (b - a) / 2]);
  byId("later").onclick = () => shift((a, b) => [a + (b - a) / 2, b + (b - a) / 2]);
  byId("last-hour").onclick = () => void load();
  byId("whole").onclick = () => {
    const first = Date.parse(st.tl?.ledger_first ?? "");
    const last = Date.parse(st.tl?.ledger_last ?? "");
    if (!Number.isFinite(first) || !Number.isFinite(last)) return;
    const pad = Math.max(1000, (last - first) * 0.02);
    void load(new Date(first - pad).toISOString(), new Date(last + pad).toISOString());
  };
  byId("group").onchange = () => {
    draw();
    remember(true);
  };
  byId<HTMLFormElement>("decision-filter").onsubmit = (e) => {
    e.preventDefault();
    remember(true);
    void loadDecisions(false);
  };
  byId("decisions-more").onclick = () => void loadDecisions(true);
  byId<HTMLFormElement>("whatif-form").onsubmit = (e) => {
    e.preventDefault();
    void runWhatIf();
  };
  byId("whatif-cancel").onclick = () => st.whatIf?.abort();
  byId<HTMLInputElement>("whatif-file").onchange = async (e) => {
    const input = e.target as HTMLInputElement;
    const f = input.files?.[0];
    if (!f) return;
    // The size first: a file over the server's limit is refused unread.
    if (f.size > api.MAX_BODY_BYTES) {
      byId("whatif-result").replaceChildren(
        h("p", { class: "error", role: "alert" }, `${f.name} is ${mib(f.size)}; the server takes at most ${mib(api.MAX_BODY_BYTES)} in a request, so it was not loaded.`),
      );
      input.value = "";
      return;
    }
    byId<HTMLTextAreaElement>("whatif-config").value = await f.text();
    byId("whatif-result").replaceChildren();
  };
  // Escape closes the turn view (the token form excepted: it must be answered).
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && !byId("turn-section").hidden && byId("token-dialog").hidden) {
      e.preventDefault();
      closeTurn();
    }
  });
  // Redraw when the box's width changes (window resized, a page
  // scrollbar come or gone), not on every resize event.
  let resize = 0;
  new ResizeObserver(() => {
    clearTimeout(resize);
    resize = window.setTimeout(() => {
      if (width() !== st.drawnWidth) draw();
    }, 100);
  }).observe(byId("timeline"));
  // Back and forward: the view the URL holds.
  window.addEventListener("popstate", () => {
    // A hash-only step (the skip link) keeps the view.
    if (location.search === st.search) return;
    const r = fromURL();
    void load(r.since, r.until, false);
  });
  const r = fromURL();
  await load(r.since, r.until, false);
  const m = /^#turn=(.+)$/.exec(location.hash);
  if (m) void openTurn(decodeURIComponent(m[1]!));
}

void start();
