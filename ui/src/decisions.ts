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
      h("td", {}, d.time),
      h("td", {}, d.turnId ?? ""),
      h("td", {}, d.sessionId ?? ""),
      h("td", {}, d.decision),
      h("td", {}, cand + (d.attempt ? ` (#${d.attempt}${d.total ? "/" + d.total : ""})` : "")),
      h("td", {}, d.reason ?? ""),
      h("td", {}, [d.status, d.code].filter((v) => v !== undefined && v !== "").join(" ")),
      h("td", {}, next),
    );
    return tr;
  });
}

export const DECISION_HEAD = ["seq", "time", "turn", "session", "decision", "candidate", "reason", "status", "next candidate"];
