// The timeline: one lane per auth profile with its non-ready windows, one
// lane per session (or model) with the turns as marks, drawn as one SVG
// string. Marks closer than a mark's width are aggregated into one bar
// per cluster (its outcome counts stacked), so a zoomed-out range of
// 10,000 turns draws a few thousand elements; Enter on a bar zooms into
// it. Keyboard: the chart is one tab stop; arrows move between marks
// (Left/Right in a lane, Up/Down across lanes), Enter or Space opens a
// turn or zooms into a bar.

import type { Timeline, TurnMark, Window } from "./api";
import { count, esc, naturalCompare } from "./dom";
import { OUTCOMES, STATES, cls, outcomeMeta, stateMeta } from "./outcomes";

export type GroupBy = "session" | "model";

export interface Handlers {
  openTurn(turnID: string): void;
  zoom(since: string, until: string): void;
}

interface Item {
  lane: number;
  x: number;
  label: string;
  // detail is the tooltip text (a turn's is made when shown: turnDetail).
  detail?: string;
  turn?: TurnMark;
  zoom?: [number, number];
  // dense marks have no element of their own: y is their lane's top, and
  // the focus proxy stands in for them (see el).
  denseY?: number;
}

const LABEL_W = 210;
const LANE_H = 20;
const AXIS_H = 26;
const HEAD_H = 22;
const MARK_W = 11;
// DENSE_MARKS single marks and more are drawn as shapes without letters.
const DENSE_MARKS = 1500;

// shape is the outline of a dense mark of outcome o centred at cx in the
// lane at y: ● first_try, ■ rotated, ▼ fell_back, ✖ exhausted, ▬ stopped,
// ◆ switched, ▮ anything else (running).
export function shape(o: string, cx: number, y: number): string {
  const c = (n: number) => +(cx + n).toFixed(1);
  switch (o) {
    case "first_try":
      return `M${c(-4.5)} ${y + 10}a4.5 4.5 0 1 0 9 0a4.5 4.5 0 1 0-9 0Z`;
    case "rotated":
      return `M${c(-4.5)} ${y + 5.5}h9v9h-9Z`;
    case "fell_back":
      return `M${c(-5)} ${y + 5}h10l-5 10Z`;
    case "exhausted":
      return `M${c(-5)} ${y + 6}l2-2 3 3 3-3 2 2-3 3 3 3-2 2-3-3-3 3-2-2 3-3Z`;
    case "stopped":
      return `M${c(-5)} ${y + 8}h10v4h-10Z`;
    case "switched":
      return `M${c(0)} ${y + 4}l5 6-5 6-5-6Z`;
  }
  return `M${c(-1.5)} ${y + 4}h3v12h-3Z`;
}

export interface Rendered {
  elements: number;
  aggregated: number;
  // ms is the whole render: buildMs making the SVG text, the rest the
  // browser parsing it and laying it out.
  ms: number;
  buildMs: number;
}

const iso = (t: number) => new Date(t).toISOString();

export function turnLabel(t: TurnMark): string {
  const m = outcomeMeta(t.outcome);
  const to = t.final_model ? ` → ${t.final_model}${t.final_profile ? " @ " + t.final_profile : ""}` : ` → no answer${t.reason ? " (" + t.reason + ")" : ""}`;
  return `turn ${t.turn_id}: ${m.label} (${m.letter}) at ${t.started_at}, session ${t.session}, ${t.requested_model}${to}, ${count(t.attempts, "attempt")}`;
}

export function windowLabel(profile: string, w: Window): string {
  let s = `${profile}: ${w.state} (${w.reason}${w.model ? ", model " + w.model : ", whole profile"}${w.source ? ", reset source " + w.source : ""}) from ${w.from} until ${w.until}`;
  if (!w.ended_at) s += ", still active";
  else if (w.ended_at !== w.until) s += `, ended ${w.ended_at}`;
  s += `, set at seq ${w.set_seq}`;
  if (w.cleared_seq) s += `, cleared at seq ${w.cleared_seq}`;
  return s;
}

function turnDetail(t: TurnMark): string {
  const m = outcomeMeta(t.outcome);
  return [
    `turn ${t.turn_id} — ${m.letter} ${m.label}: ${m.words}`,
    `session ${t.session}`,
    `started ${t.started_at}${t.ended_at ? ", ended " + t.ended_at : ""}`,
    `requested ${t.requested_model}; answered by ${t.final_model || "none"}${t.final_profile ? " @ " + t.final_profile : ""}`,
    `${count(t.attempts, "attempt")}; stream seq ${t.start_seq}–${t.end_seq || "…"}`,
    "Enter or click opens the turn",
  ].join("\n");
}

function tickStep(spanMs: number, px: number): number {
  const steps = [1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4, 12e4, 3e5, 6e5, 9e5, 18e5, 36e5, 72e5, 108e5, 216e5, 432e5, 864e5];
  for (const s of steps) if ((s / spanMs) * px >= 90) return s;
  return steps[steps.length - 1]!;
}

function tickLabel(t: number, step: number): string {
  const s = iso(t);
  if (step >= 864e5) return s.slice(0, 10);
  return step < 6e4 ? s.slice(11, 19) : s.slice(11, 16);
}

export class TimelineView {
  private items: Item[] = [];
  private lanes: number[][] = [];
  private current = -1;
  private handlers: Handlers;
  private tip: HTMLElement;

  constructor(
    private root: HTMLElement,
    handlers: Handlers,
  ) {
    this.handlers = handlers;
    this.tip = document.createElement("div");
    this.tip.className = "tip";
    this.tip.setAttribute("role", "tooltip");
    this.tip.id = "timeline-tip";
    this.tip.hidden = true;
    document.body.append(this.tip);
    root.addEventListener("mouseover", (e) => this.hover(e));
    root.addEventListener("mousemove", (e) => {
      if ((e.target as Element | null)?.hasAttribute?.("data-lane")) this.hover(e);
    });
    root.addEventListener("mouseleave", () => (this.tip.hidden = true));
    root.addEventListener("click", (e) => {
      const i = this.indexOf(e.target, e.clientX);
      if (i >= 0) {
        this.focus(i);
        this.activate(i);
      }
    });
    root.addEventListener("keydown", (e) => this.key(e));
    root.addEventListener("focusin", (e) => {
      const i = this.indexOf(e.target);
      if (i >= 0) this.showTip(i, (e.target as Element).getBoundingClientRect());
    });
    root.addEventListener("focusout", () => (this.tip.hidden = true));
  }

  render(tl: Timeline, groupBy: GroupBy, width: number): Rendered {
    const start = performance.now();
    this.items = [];
    this.lanes = [];
    this.current = -1;
    const t0 = Date.parse(tl.since ?? tl.ledger_first ?? "");
    let t1 = Date.parse(tl.until ?? tl.ledger_last ?? "");
    if (!Number.isFinite(t0) || (!tl.ledger_first && tl.turns.length === 0 && tl.profiles.length === 0)) {
      this.root.innerHTML = `<p class="empty">The ledger has no events for agent ${esc(tl.agent)}.</p>`;
      return { elements: 0, aggregated: 0, ms: performance.now() - start, buildMs: 0 };
    }
    if (!(t1 > t0)) t1 = t0 + 1000;
    const plotW = Math.max(300, width - LABEL_W - 12);
    const x = (t: number) => ((t - t0) / (t1 - t0)) * plotW;
    const out: string[] = [];
    let y = AXIS_H;
    let aggregated = 0;

    // Profile lanes.
    out.push(this.head("Auth profiles", y, plotW, `${count(tl.profiles.length, "profile")}`));
    y += HEAD_H;
    for (const p of tl.profiles) {
      const lane = this.lanes.length;
      this.lanes.push([]);
      out.push(this.laneLabel(p.profile_id, y, plotW, `profile ${p.profile_id} (${count(p.windows.length, "window")})`));
      const ws = p.windows;
      const merge = ws.length > plotW / 4;
      let pending: { a: number; b: number; first: Window; last: Window; n: number; states: Map<string, number> } | null = null;
      const flush = () => {
        if (!pending) return;
        const g = pending;
        pending = null;
        if (g.n === 1) return this.windowEl(out, lane, p.profile_id, g.first, x, y, t0, t1);
        aggregated++;
        const counts = [...g.states].map(([s, n]) => `${n} ${s}`).join(", ");
        const label = `${p.profile_id}: ${g.n} windows from ${g.first.from} to ${g.last.ended_at ?? g.last.until}: ${counts}; Enter zooms in`;
        const i = this.add({ lane, x: g.a, label, detail: label, zoom: [Date.parse(g.first.from), Date.parse(g.last.ended_at ?? g.last.until)] });
        out.push(
          `<rect class="w wagg" data-i="${i}" role="button" tabindex="-1" aria-label="${esc(label)}" x="${LABEL_W + g.a}" y="${y + 3}" width="${Math.max(3, g.b - g.a)}" height="${LANE_H - 6}"/>`,
        );
      };
      for (const w of ws) {
        const a = x(Math.max(Date.parse(w.from), t0));
        const b = x(Math.min(Date.parse(w.ended_at ?? w.until), t1));
        if (merge && pending && a <= pending.b + 4) {
          pending.b = Math.max(pending.b, b);
          pending.last = w;
          pending.n++;
          pending.states.set(w.state, (pending.states.get(w.state) ?? 0) + 1);
          continue;
        }
        flush();
        pending = { a, b, first: w, last: w, n: 1, states: new Map([[w.state, 1]]) };
      }
      flush();
      y += LANE_H;
    }

    // Turn lanes.
    const groups = new Map<string, TurnMark[]>();
    for (const t of tl.turns) {
      const k = groupBy === "session" ? t.session : t.final_model || t.requested_model;
      let g = groups.get(k);
      if (!g) groups.set(k, (g = []));
      g.push(t);
    }
    const keys = [...groups.keys()].sort(naturalCompare);
    out.push(
      this.head(
        groupBy === "session" ? "Turns by session" : "Turns by model",
        y,
        plotW,
        `${count(tl.turns.length, "turn")}${tl.truncated ? " (truncated: narrow the range)" : ""}`,
      ),
    );
    y += HEAD_H;
    // Cluster each lane's marks first: the number of single marks decides
    // how they are drawn (dense: one shape element per mark, no letter).
    const clusters: { ts: TurnMark[]; xa: number; xb: number }[][] = [];
    let singles = 0;
    for (const k of keys) {
      const ts = groups.get(k)!;
      const xs = ts.map((t) => x(Date.parse(t.started_at)));
      const cs: { ts: TurnMark[]; xa: number; xb: number }[] = [];
      let i = 0;
      while (i < ts.length) {
        const xa = xs[i]!;
        let j = i + 1;
        while (j < ts.length && xs[j]! < xa + MARK_W) j++;
        const xb = xs[j - 1]!;
        if (j === i + 1) singles++;
        cs.push({ ts: ts.slice(i, j), xa, xb });
        i = j;
      }
      clusters.push(cs);
    }
    const dense = singles > DENSE_MARKS;
    keys.forEach((k, n) => {
      const lane = this.lanes.length;
      this.lanes.push([]);
      const nTurns = groups.get(k)!.length;
      out.push(this.laneLabel(k || "(none)", y, plotW, `${groupBy} ${k} (${count(nTurns, "turn")})`, dense ? lane : -1));
      const segs = new Map<string, string[]>();
      const shapes = new Map<string, string[]>();
      const counts: string[] = [];
      for (const c of clusters[n]!) {
        if (c.ts.length > 1) {
          aggregated++;
          this.aggEl(out, segs, counts, lane, c.ts, c.xa, c.xb, y);
        } else if (dense) this.denseMark(shapes, lane, c.ts[0]!, c.xa, y);
        else this.markEl(out, lane, c.ts[0]!, c.xa, y);
      }
      // The bars' outcome segments and the dense marks' shapes: one path
      // per outcome for the lane.
      for (const [o, d] of segs) out.push(`<path class="seg o-${cls(o)}" d="${d.join("")}"/>`);
      for (const [o, d] of shapes) out.push(`<path class="mk o-${cls(o)}" data-lane="${lane}" d="${d.join("")}"/>`);
      out.push(...counts);
      y += LANE_H;
    });

    // Axis, drawn last over the lane backgrounds' grid lines.
    const step = tickStep(t1 - t0, plotW);
    const ticks: string[] = [];
    for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
      const tx = LABEL_W + x(t);
      const label = tx + 44 < LABEL_W + plotW ? `<text class="tick" x="${tx + 2}" y="${AXIS_H - 8}">${tickLabel(t, step)}</text>` : "";
      ticks.push(`<line class="grid" x1="${tx}" x2="${tx}" y1="${AXIS_H - 4}" y2="${y}"/>${label}`);
    }
    const height = y + 4;
    const first = this.lanes.find((l) => l.length > 0)?.[0];
    const svg =
      `<svg id="timeline-svg" width="${LABEL_W + plotW + 8}" height="${height}" role="group" aria-label="Timeline ${esc(iso(t0))} to ${esc(iso(t1))} (UTC): ${count(tl.profiles.length, "profile lane")}, ${count(keys.length, groupBy + " lane")}, ${count(tl.turns.length, "turn")}. Arrow keys move between marks, Enter opens." aria-describedby="timeline-tip">` +
      `<defs><pattern id="p-cooldown" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" class="pc-bg"/><line x1="0" y1="0" x2="0" y2="6" class="pc-ln"/></pattern>` +
      `<pattern id="p-disabled" width="6" height="6" patternUnits="userSpaceOnUse"><rect width="6" height="6" class="pd-bg"/><path d="M0 0L6 6M6 0L0 6" class="pd-ln"/></pattern>` +
      `<pattern id="p-blocked" width="5" height="5" patternUnits="userSpaceOnUse"><rect width="5" height="5" class="pb-bg"/><circle cx="2.5" cy="2.5" r="1" class="pb-ln"/></pattern></defs>` +
      ticks.join("") +
      out.join("") +
      `<text class="axis-note" x="4" y="${AXIS_H - 8}">UTC</text>` +
      (dense ? `<rect id="mark-proxy" class="proxy" role="button" tabindex="-1" x="0" y="0" width="${MARK_W + 1}" height="${LANE_H - 2}"/>` : "") +
      `</svg>`;
    const built = performance.now();
    this.root.innerHTML = svg;
    if (first !== undefined) {
      this.el(first)?.setAttribute("tabindex", "0");
      this.current = first;
    }
    const elements = this.items.length;
    // Force layout so the figure includes it.
    void this.root.getBoundingClientRect().height;
    return { elements, aggregated, ms: performance.now() - start, buildMs: built - start };
  }

  private add(it: Item): number {
    this.items.push(it);
    this.lanes[it.lane]!.push(this.items.length - 1);
    return this.items.length - 1;
  }

  private head(title: string, y: number, plotW: number, note: string): string {
    return `<text class="head" x="4" y="${y + 15}">${esc(title)}</text><text class="head-note" x="${LABEL_W}" y="${y + 15}">${esc(note)}</text><line class="sep" x1="0" x2="${LABEL_W + plotW}" y1="${y + HEAD_H - 1}" y2="${y + HEAD_H - 1}"/>`;
  }

  private laneLabel(name: string, y: number, plotW: number, title: string, denseLane = -1): string {
    const short = name.length > 30 ? name.slice(0, 29) + "…" : name;
    return `<rect class="lane"${denseLane >= 0 ? ` data-lane="${denseLane}"` : ""} x="${LABEL_W}" y="${y + 1}" width="${plotW}" height="${LANE_H - 2}"/><text class="lane-label" data-name="${esc(name)}" x="4" y="${y + 14}"><title>${esc(title)}</title>${esc(short)}</text>`;
  }

  private windowEl(out: string[], lane: number, profile: string, w: Window, x: (t: number) => number, y: number, t0: number, t1: number): void {
    const a = x(Math.max(Date.parse(w.from), t0));
    const end = Date.parse(w.ended_at ?? w.until);
    const b = x(Math.min(end, t1));
    const deadline = x(Math.min(Date.parse(w.until), t1));
    const label = windowLabel(profile, w);
    const m = stateMeta(w.state);
    const detail = `${label}\n${m.letter} = ${m.words}`;
    const i = this.add({ lane, x: a, label, detail });
    const width = Math.max(2, b - a);
    let s = `<g class="w s-${cls(w.state)}" data-i="${i}" role="img" tabindex="-1" aria-label="${esc(label)}">`;
    if (deadline > b + 1) s += `<rect class="w-rest" x="${LABEL_W + b}" y="${y + 5}" width="${deadline - b}" height="${LANE_H - 10}"/>`;
    s += `<rect x="${LABEL_W + a}" y="${y + 3}" width="${width}" height="${LANE_H - 6}" fill="url(#p-${cls(w.state)})"/>`;
    if (width >= 12) s += `<text class="w-letter" x="${LABEL_W + a + 3}" y="${y + 14}">${m.letter}</text>`;
    out.push(s + "</g>");
  }

  // markEl draws one turn as a lettered tile, its own focusable element.
  private markEl(out: string[], lane: number, t: TurnMark, xa: number, y: number): void {
    const m = outcomeMeta(t.outcome);
    const label = turnLabel(t);
    const i = this.add({ lane, x: xa, label, turn: t });
    const cx = LABEL_W + xa;
    out.push(
      `<g class="m o-${cls(t.outcome)}" data-i="${i}" data-turn="${esc(t.turn_id)}" data-outcome="${esc(t.outcome)}" role="button" tabindex="-1" aria-label="${esc(label)}"><rect x="${cx - 5}" y="${y + 2}" width="${MARK_W - 1}" height="${LANE_H - 4}" rx="2"/><text x="${cx}" y="${y + 14}">${m.letter}</text></g>`,
    );
  }

  // denseMark draws one turn when many stand alone: its shape joins its
  // lane's path of that outcome (an element, and a text, per mark would
  // cost more than all the rest); the mouse finds it by its x, the
  // keyboard through the focus proxy, which takes its name.
  private denseMark(shapes: Map<string, string[]>, lane: number, t: TurnMark, xa: number, y: number): void {
    this.add({ lane, x: xa, label: turnLabel(t), turn: t, denseY: y });
    let d = shapes.get(t.outcome);
    if (!d) shapes.set(t.outcome, (d = []));
    d.push(shape(t.outcome, LABEL_W + xa, y));
  }

  // aggEl draws a bar standing for several turns: its outline (the
  // focusable element with the counts as its name) here, its stacked
  // outcome segments into segs (drawn as one path per outcome per lane),
  // its count, when it has room, into counts (drawn over the segments).
  private aggEl(out: string[], segs: Map<string, string[]>, counts_: string[], lane: number, ts: TurnMark[], xa: number, xb: number, y: number): void {
    const counts = new Map<string, number>();
    for (const t of ts) counts.set(t.outcome, (counts.get(t.outcome) ?? 0) + 1);
    const order = [...Object.keys(OUTCOMES), ...[...counts.keys()].filter((k) => !(k in OUTCOMES))].filter((k) => counts.has(k));
    const words = order.map((o) => `${counts.get(o)} ${outcomeMeta(o).label} (${outcomeMeta(o).letter})`).join(", ");
    const first = ts[0]!.started_at;
    const last = ts[ts.length - 1]!.started_at;
    const label = `${ts.length} turns from ${first} to ${last}: ${words}; Enter zooms in`;
    const a = Date.parse(first);
    const b = Date.parse(last);
    const pad = Math.max(1000, (b - a) * 0.05);
    const i = this.add({ lane, x: xa, label, detail: label, zoom: [a - pad, b + pad] });
    const w = +Math.max(MARK_W - 1, xb - xa + MARK_W - 1).toFixed(1);
    const x0 = +(LABEL_W + xa - 5).toFixed(1);
    out.push(`<rect class="agg" data-i="${i}" role="button" tabindex="-1" aria-label="${esc(label)}" x="${x0 - 1}" y="${y + 1}" width="${w + 2}" height="${LANE_H - 2}"/>`);
    let yy = y + 2;
    const H = LANE_H - 4;
    for (const o of order) {
      const hh = (counts.get(o)! / ts.length) * H;
      let d = segs.get(o);
      if (!d) segs.set(o, (d = []));
      d.push(`M${x0} ${yy.toFixed(1)}h${w}v${hh.toFixed(1)}h${-w}Z`);
      yy += hh;
    }
    if (w >= 26) counts_.push(`<text class="agg-n" x="${x0 + w / 2}" y="${y + 14}">${ts.length}</text>`);
  }

  // el is item i's element; for a dense mark, the focus proxy moved onto
  // it and named after it.
  private el(i: number): SVGElement | null {
    const it = this.items[i];
    if (it?.denseY === undefined) return this.root.querySelector(`[data-i="${i}"]`);
    const p = this.root.querySelector<SVGElement>("#mark-proxy");
    if (!p || !it.turn) return null;
    p.setAttribute("x", String(LABEL_W + it.x - MARK_W / 2 - 0.5));
    p.setAttribute("y", String(it.denseY + 1));
    p.setAttribute("data-i", String(i));
    p.setAttribute("data-turn", it.turn.turn_id);
    p.setAttribute("data-outcome", it.turn.outcome);
    p.setAttribute("aria-label", it.label);
    return p;
  }

  // indexOf is the item under an event's target: its own element, or on
  // a dense lane the mark nearest to the pointer (within half a mark).
  private indexOf(t: EventTarget | null, clientX?: number): number {
    const el = (t as Element | null)?.closest?.("[data-i],[data-lane]");
    if (!el) return -1;
    if (el.hasAttribute("data-i")) return Number(el.getAttribute("data-i"));
    if (clientX === undefined) return -1;
    const svg = this.root.querySelector("svg");
    const xa = clientX - (svg?.getBoundingClientRect().left ?? 0) - LABEL_W;
    let best = -1;
    for (const i of this.lanes[Number(el.getAttribute("data-lane"))] ?? []) {
      const d = Math.abs(this.items[i]!.x - xa);
      if (d <= MARK_W / 2 + 1 && (best < 0 || d < Math.abs(this.items[best]!.x - xa))) best = i;
    }
    return best;
  }

  private hover(e: MouseEvent): void {
    const i = this.indexOf(e.target, e.clientX);
    if (i < 0) {
      this.tip.hidden = true;
      return;
    }
    const it = this.items[i]!;
    const r = it.denseY === undefined ? (e.target as Element).getBoundingClientRect() : new DOMRect(e.clientX - 5, e.clientY - 8, 10, 16);
    this.showTip(i, r);
  }

  private showTip(i: number, r: DOMRect): void {
    const it = this.items[i];
    if (!it) return;
    this.tip.textContent = it.detail ?? (it.turn ? turnDetail(it.turn) : it.label);
    this.tip.hidden = false;
    // Above the item, so the lane below (where ArrowDown goes) stays in
    // sight; below it only when there is no room above in the window.
    const left = Math.min(window.scrollX + r.left, window.scrollX + document.documentElement.clientWidth - 440);
    this.tip.style.left = `${Math.max(4, left)}px`;
    const h = this.tip.offsetHeight;
    const above = r.top - h - 6 >= 0;
    this.tip.dataset.side = above ? "above" : "below";
    this.tip.style.top = `${window.scrollY + (above ? r.top - h - 6 : r.bottom + 6)}px`;
  }

  private focus(i: number): void {
    if (this.current >= 0) this.el(this.current)?.setAttribute("tabindex", "-1");
    this.current = i;
    const el = this.el(i);
    if (!el) return;
    el.setAttribute("tabindex", "0");
    (el as unknown as HTMLElement).focus();
    // The proxy may have had the focus already: no focusin, so say it here.
    this.showTip(i, el.getBoundingClientRect());
  }

  private activate(i: number): void {
    const it = this.items[i];
    if (!it) return;
    if (it.turn) this.handlers.openTurn(it.turn.turn_id);
    else if (it.zoom) this.handlers.zoom(iso(it.zoom[0]), iso(it.zoom[1]));
  }

  private key(e: KeyboardEvent): void {
    const i = this.indexOf(e.target);
    if (i < 0) return;
    const it = this.items[i]!;
    const lane = this.lanes[it.lane]!;
    const pos = lane.indexOf(i);
    let next = -1;
    switch (e.key) {
      case "Enter":
      case " ":
        e.preventDefault();
        this.activate(i);
        return;
      case "ArrowRight":
        next = lane[pos + 1] ?? -1;
        break;
      case "ArrowLeft":
        next = lane[pos - 1] ?? -1;
        break;
      case "Home":
        next = lane[0] ?? -1;
        break;
      case "End":
        next = lane[lane.length - 1] ?? -1;
        break;
      case "ArrowDown":
      case "ArrowUp": {
        const d = e.key === "ArrowDown" ? 1 : -1;
        for (let l = it.lane + d; l >= 0 && l < this.lanes.length; l += d) {
          const cand = this.lanes[l]!;
          if (cand.length === 0) continue;
          next = cand.reduce((best, c) => (Math.abs(this.items[c]!.x - it.x) < Math.abs(this.items[best]!.x - it.x) ? c : best), cand[0]!);
          break;
        }
        break;
      }
      default:
        return;
    }
    e.preventDefault();
    if (next >= 0) this.focus(next);
  }
}

export function legend(): string {
  const o = Object.entries(OUTCOMES)
    .map(
      ([k, m]) =>
        `<li><svg width="26" height="18" aria-hidden="true"><g class="m o-${k}"><rect x="0" y="1" width="11" height="16" rx="2"/><text x="5.5" y="13">${esc(m.letter)}</text></g><path class="m o-${k}" d="${shape(k, 20, -1)}"/></svg> <b>${esc(m.letter)}</b> ${esc(m.label)}: ${esc(m.words)}</li>`,
    )
    .join("");
  const s = Object.entries(STATES)
    .map(([k, m]) => `<li><svg width="28" height="14" aria-hidden="true"><rect width="28" height="14" class="lg-${k}"/></svg> <b>${esc(m.letter)}</b> ${esc(m.label)}: ${esc(m.words)}</li>`)
    .join("");
  return `<ul class="legend" aria-label="Turn outcomes">${o}</ul><ul class="legend" aria-label="Profile states">${s}<li><svg width="28" height="14" aria-hidden="true"><rect class="agg-bg" width="28" height="14"/></svg> a number = that many turns aggregated (Enter zooms in)</li><li>When more than ${DENSE_MARKS} turns stand alone, each is drawn by its shape only (the second symbol above).</li></ul>`;
}
