// The decisions table: GET /v1/decisions for the timeline's range with
// the agent/provider/reason/outcome filters, read on page by page.

import type { Decision } from "./api";
import { h } from "./dom";

export function decisionRows(ds: Decision[], openTurn: (id: string) => void): HTMLTableRowElement[] {
  return ds.map((d) => {
    const open = () => d.turnId && openTurn(d.turnId);
    const cand = [d.candidateProvider, d.candidateModel].filter(Boolean).join("/");
    const next = [d.nextCandidateProvider, d.nextCandidateModel].filter(Boolean).join("/");
    const tr = h(
      "tr",
      {
        tabindex: d.turnId ? "0" : undefined,
        "data-turn": d.turnId,
        "aria-label": d.turnId ? `decision ${d.decision} of turn ${d.turnId}; Enter opens the turn` : undefined,
        onclick: open as EventListener,
        onkeydown: ((e: KeyboardEvent) => {
          if (e.key === "Enter" || e.key === " ") {
            e.preventDefault();
            open();
          }
        }) as EventListener,
      },
      h("td", {}, `${d.seq}.${d.idx}`),
      h("td", {}, ...breakable(d.time, /\d(T)\d/g)),
      h("td", {}, ...breakable(d.turnId ?? "")),
      h("td", {}, ...breakable(d.sessionId ?? "")),
      h("td", {}, ...breakable(d.decision)),
      h("td", {}, ...breakable(cand + (d.attempt ? ` (#${d.attempt}${d.total ? "/" + d.total : ""})` : ""))),
      h("td", {}, ...breakable(d.reason ?? "")),
      h("td", {}, ...breakable([d.status, d.code].filter((v) => v !== undefined && v !== "").join(" "))),
      h("td", {}, ...breakable(next)),
    );
    return tr;
  });
}

// breakable is a cell's text with a line-break opportunity (<wbr>) after
// each _ / : @ (in a time: after its T only), so a narrow table wraps its long names
// (candidate_failed, anthropic/claude-opus-4-6, 2026-03-02T09:00:09Z)
// there rather than run out of its box; the text stays the same.
function breakable(t: string, at_ = /[_/:@]/g): (string | HTMLElement)[] {
  const out: (string | HTMLElement)[] = [];
  let from = 0;
  for (const m of t.matchAll(at_)) {
    const at = m.index + (m[1] ? 2 : 1);
    out.push(t.slice(from, at), h("wbr"));
    from = at;
  }
  out.push(t.slice(from));
  return out;
}

export const DECISION_HEAD = ["seq", "time", "turn", "session", "decision", "candidate", "reason", "status", "next candidate"];
