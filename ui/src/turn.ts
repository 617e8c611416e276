// The turn view: GET /v1/turns/{id}/explanation (what `fledger explain
// TURN --json` prints) laid out as a sequence, each step with its stream
// sequence so it can be checked with the CLI.

import type { Explanation } from "./api";
import { count, h } from "./dom";

export function renderTurn(x: Explanation, close: () => void): HTMLElement {
  const success = x.outcome === "succeeded";
  const chain = h(
    "ol",
    { class: "chain", "aria-label": "Candidate chain" },
    ...x.chain.map((c) => h("li", {}, h("code", {}, c.model), ` ${c.label || c.route_origin}`)),
  );
  const steps = h(
    "ol",
    { class: "steps", "aria-label": "Steps in stream order" },
    ...x.steps.map((s) =>
      h(
        "li",
        { class: "step k-" + s.kind, "data-kind": s.kind, "data-seq": s.seq },
        h("span", { class: "seq", title: `stream sequence ${s.seq}, event ${s.index} of its commit` }, `seq ${s.seq}.${s.index}`),
        h("span", { class: "off", title: s.at }, s.offset),
        h("span", { class: "kind" }, s.kind),
        h("span", { class: "text" }, s.text),
        s.details && s.details.length > 0 ? h("ul", { class: "details" }, ...s.details.map((d) => h("li", {}, d))) : null,
      ),
    ),
  );
  const notices = x.notices ?? [];
  const attempts = x.steps.filter((s) => s.kind === "attempt");
  return h(
    "article",
    { class: "turn", "aria-labelledby": "turn-title", "data-turn": x.turn_id, "data-outcome": x.outcome },
    h(
      "header",
      {},
      h("h2", { id: "turn-title", tabindex: "-1" }, `Turn ${x.turn_id}`),
      h("button", { type: "button", class: "close", onclick: close as EventListener }, "Close turn"),
    ),
    h(
      "dl",
      { class: "facts" },
      h("dt", {}, "Session"),
      h("dd", {}, `${x.session}${x.chat ? " (" + x.chat + " chat)" : ""}`),
      h("dt", {}, "Started"),
      h("dd", {}, x.started_at),
      h("dt", {}, "Requested"),
      h("dd", {}, `${x.requested} (source ${x.selection_source}${x.strict ? ", strict" : ""})`),
      h("dt", {}, "Why"),
      h("dd", {}, x.why),
      x.pinned_profile ? h("dt", {}, "Pinned profile") : null,
      x.pinned_profile ? h("dd", {}, `${x.pinned_profile} (${x.pin_source ?? ""})`) : null,
      h("dt", {}, "Outcome"),
      h(
        "dd",
        { class: "outcome o-" + (success ? "ok" : x.outcome) },
        `${x.outcome}${x.answered_by ? ": " + x.answered_by + (x.profile ? " @ " + x.profile : "") : ""} — ${count(x.attempts, "attempt")}, ${x.duration_ms} ms`,
      ),
      h("dt", {}, "Config"),
      h("dd", {}, h("code", {}, x.config_hash)),
      h("dt", {}, "Check with"),
      h("dd", {}, h("code", {}, `fledger explain ${x.turn_id} --agent ${x.agent} --json`)),
    ),
    h("h3", {}, `Chain (attempt limit ${x.attempt_limit})`),
    chain,
    h("h3", {}, `Steps (${x.steps.length}, of them ${count(attempts.length, "attempt")})`),
    steps,
    h("h3", {}, `Notices (${notices.length})`),
    notices.length === 0
      ? h("p", {}, "No notice.")
      : h(
          "ul",
          { class: "notices" },
          ...notices.map((n) => h("li", { class: n.delivered ? "shown" : "suppressed" }, h("b", {}, n.delivered ? "shown" : "suppressed (not delivered in this chat)"), ` ${n.kind}: ${n.text}`)),
        ),
    h("h3", {}, "End"),
    h("p", { class: "end" }, x.end),
  );
}

