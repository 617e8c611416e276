// The generated Next is a union discriminated by action: after a check of
// action, that variant's fields type-check under tsc --strict, and another
// variant's do not (the @ts-expect-error lines fail the build if they
// ever compile).

import assert from "node:assert/strict";
import { test } from "node:test";

import type { Next } from "../src/index.js";

/** What a gateway reads from each step; it compiles only while Next narrows. */
function describeNext(next: Next): string {
  switch (next.action) {
    case "call":
      return `call ${next.provider}/${next.model} ${next.profile ?? "default credentials"} attempt ${next.attempt} (${next.kind})`;
    case "wait":
      // @ts-expect-error a wait has no provider
      void next.provider;
      return `wait ${next.ms ?? 0} ms until ${next.resume_at}`;
    case "done":
      return `done by ${next.answered_by}`;
    case "exhausted":
      return `exhausted: ${next.summary ?? ""} (${next.attempts?.length ?? 0} attempts)`;
    case "stop":
      return `stop ${next.disposition}: ${next.message ?? ""}`;
    case "switch":
      // @ts-expect-error a switch has no disposition
      void next.disposition;
      return `switch to ${next.switch_to}${next.profile ? "@" + next.profile : ""}: ${next.message}`;
  }
}

test("Next narrows on action", () => {
  const call: Next = { action: "call", provider: "openai", model: "gpt-5", attempt: 1, kind: "first", notices: [] };
  const wait: Next = { action: "wait", ms: 1000, resume_at: 1796534116364, notices: [] };
  const sw: Next = { action: "switch", switch_to: "google-gemini/gemini-2.5-pro", message: "LiveSessionModelSwitchError", notices: [] };
  if (call.action === "call") assert.equal(call.provider, "openai");
  assert.deepEqual([describeNext(call), describeNext(wait), describeNext(sw)], [
    "call openai/gpt-5 default credentials attempt 1 (first)",
    "wait 1000 ms until 1796534116364",
    "switch to google-gemini/gemini-2.5-pro: LiveSessionModelSwitchError",
  ]);
});
