// The viewer on a real ledger in Chromium: fixtures/scenarios/incident-day
// run by `fledger run` (agent "incident", and rate-limit-storm as a second
// agent "storm" for the agent picker), served by `fledger view` with a
// token. The expected values come from the CLI's own JSON (events,
// turns, decisions), never from the API the page reads. Screenshots go to
// ui/test-output/.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { launch, sayskip, shotPath, uiRoot } from "./browser.mjs";
import { setup, startViewer } from "./fledger.mjs";

const TOKEN = "viewer-test-token";
const iso = (t) => new Date(t).toISOString();
const LETTER = { first_try: "F", rotated: "R", fell_back: "B", exhausted: "X", stopped: "S", switched: "W" };
const WORDS = { first_try: "first try", rotated: "rotated", fell_back: "fell back", exhausted: "exhausted", stopped: "stopped", switched: "switched" };

// The windows the ledger records: each ProfileFailureRecorded that sets a
// cooldown or a disable, with its exact times (none is cleared early in
// incident-day).
function recordedWindows(events) {
  const out = [];
  for (const e of events) {
    if (e.type !== "ProfileFailureRecorded") continue;
    const p = e.payload;
    if (p.cooldown_until) out.push({ profile: p.profile_id, state: "cooldown", reason: p.cooldown_reason, model: p.cooldown_model ?? "", from: iso(e.at), until: iso(p.cooldown_until), seq: e.seq });
    if (p.disabled_until) out.push({ profile: p.profile_id, state: "disabled", reason: p.disabled_reason, model: "", from: iso(e.at), until: iso(p.disabled_until), seq: e.seq });
  }
  return out;
}

// The timeline's outcome of a turn row of `fledger turns --json`.
function markOutcome(t) {
  if (t.outcome !== "succeeded") return t.outcome;
  if (t.attempts === 1) return "first_try";
  return t.answeredBy === t.requestedModel ? "rotated" : "fell_back";
}

test("incident-day in the viewer: lanes, marks, a fallen-back turn, filters, what-if", { skip: sayskip() || false, timeout: 180_000 }, async (t) => {
  const f = setup();
  let viewer;
  let b;
  try {
    f.cli("run", "fixtures/scenarios/incident-day.yaml", "--agent", "incident");
    f.cli("run", "fixtures/scenarios/rate-limit-storm.yaml", "--agent", "storm");
    const events = f.jsonl("events", "--json", "--agent", "incident");
    const turns = f.jsonl("turns", "--json", "--agent", "incident");
    const decisions = f.jsonl("decisions", "--json", "--agent", "incident");
    const windows = recordedWindows(events);
    assert.ok(windows.length >= 3, "incident-day records cooldowns and a disable");

    viewer = await startViewer(f, { token: TOKEN });
    b = await launch({ viewport: { width: 1100, height: 800 } });
    const page = await b.context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));

    await t.test("the page asks for the token and keeps it in memory", async () => {
      await page.goto(`${viewer.url}/ui?agent=incident`);
      await page.waitForSelector("#token-dialog:not([hidden])");
      await page.fill("#token", TOKEN);
      await page.keyboard.press("Enter");
      await page.waitForSelector('#timeline[data-rendered="1"]');
      assert.equal(await page.inputValue("#agent"), "incident");
      assert.deepEqual((await page.locator("#agent option").allTextContents()).sort(), ["incident", "storm"]);
    });

    await t.test("each profile lane shows its cooldown and disable windows at their exact recorded times", async () => {
      const shown = await page.locator("#timeline g.w").evaluateAll((els) => els.map((e) => e.getAttribute("aria-label")));
      const want = windows.map(
        (w) => `${w.profile}: ${w.state} (${w.reason}, ${w.model ? "model " + w.model : "whole profile"}) from ${w.from} until ${w.until}, set at seq ${w.seq}`,
      );
      assert.deepEqual([...shown].sort(), [...want].sort());
      // incident-day's own numbers, as its expect blocks and description say.
      assert.ok(shown.includes("anthropic:work: cooldown (rate_limit, model claude-opus-4-6) from 2026-03-02T09:00:08.842Z until 2026-03-02T09:00:38.842Z, set at seq 9"));
      assert.ok(shown.includes("anthropic:work: disabled (billing, whole profile) from 2026-03-02T09:05:00.300Z until 2026-03-02T09:15:00.300Z, set at seq 15"));
      // Lanes in provider-then-id order, a lane with no window included.
      const lanes = await page.locator("#timeline .lane-label").evaluateAll((els) => els.map((e) => e.dataset.name));
      assert.deepEqual(lanes, ["anthropic:personal", "anthropic:work", "openai:user@example.com", "dm-alice"]);
      await page.locator("#timeline-section").screenshot({ path: shotPath("viewer-timeline.png") });
    });

    await t.test("each turn's mark carries its outcome in words and letter", async () => {
      const marks = await page.locator("#timeline .m").evaluateAll((els) => els.map((e) => [e.getAttribute("data-turn"), e.getAttribute("data-outcome"), e.getAttribute("aria-label"), e.textContent]));
      assert.equal(marks.length, turns.length);
      for (const tr of turns) {
        const o = markOutcome(tr);
        const m = marks.find(([id]) => id === tr.turnId);
        assert.ok(m, `mark of ${tr.turnId}`);
        assert.equal(m[1], o, tr.turnId);
        assert.ok(m[2].startsWith(`turn ${tr.turnId}: ${WORDS[o]} (${LETTER[o]}) at ${tr.startedAt}, session ${tr.sessionId}`), m[2]);
        assert.equal(m[3], LETTER[o]);
      }
      assert.deepEqual(
        marks.map(([id, o]) => `${id}=${o}`),
        ["storm=fell_back", "recovered=first_try", "out-of-credit=rotated", "while-disabled=first_try", "after-disable=first_try"],
      );
      // Hover shows the turn's details.
      await page.locator('#timeline .m[data-turn="storm"]').hover();
      assert.match(await page.locator("#timeline-tip").textContent(), /^turn storm — B fell back: succeeded on another model of the chain\nsession dm-alice\nstarted 2026-03-02T09:00:00.000Z, ended 2026-03-02T09:00:11.062Z/);
    });

    await t.test("clicking the fallen-back turn shows its attempts with classification and sequences", async () => {
      const storm = turns.find((x) => x.turnId === "storm");
      await page.locator('#timeline .m[data-turn="storm"]').click();
      await page.waitForSelector('#turn-section article[data-turn="storm"]');
      const steps = await page.locator("#turn-section li.step").evaluateAll((els) => els.map((e) => ({ kind: e.dataset.kind, seq: e.dataset.seq, text: e.querySelector(".text").textContent })));
      const attempts = steps.filter((s) => s.kind === "attempt");
      assert.equal(attempts.length, storm.attempts);
      assert.match(attempts[0].text, /^attempt #1 first: anthropic\/claude-opus-4-6 @anthropic:work/);
      assert.match(attempts[attempts.length - 1].text, /^attempt #6 fallback: openai\/gpt-5 @openai:user@example.com/);
      const failed = steps.filter((s) => s.kind === "failed");
      assert.equal(failed.length, 5);
      for (const s of failed) assert.match(s.text, /rate_limit \(HTTP 429\)/);
      assert.ok(steps.some((s) => s.kind === "profile" && s.text.includes("cooldown until 2026-03-02T09:00:38.842Z")));
      const end = steps[steps.length - 1];
      assert.equal(end.kind, "end");
      assert.equal(Number(end.seq), storm.lastSeq);
      assert.equal(await page.locator("#turn-section .notices li.shown").textContent(), "shown fallback: ↪️ Model Fallback: openai/gpt-5 (selected anthropic/claude-opus-4-6; rate limit)");
      assert.equal(await page.evaluate(() => document.activeElement?.id), "turn-title", "focus moves to the turn");
      // The head of the turn view: facts, chain and the first attempts.
      await page.locator("#turn-section").scrollIntoViewIfNeeded();
      const box = await page.evaluate(() => {
        const r = document.getElementById("turn-section").getBoundingClientRect();
        return { x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: Math.min(r.height, 470) };
      });
      await page.screenshot({ path: shotPath("viewer-turn.png"), fullPage: true, clip: box });
      await page.getByRole("button", { name: "Close turn" }).click();
      assert.equal(await page.locator("#turn-section").isHidden(), true);
      // The same by keyboard: Tab into the chart (its one tab stop is the
      // mark focused last), Up to the profile lanes, Down to the session
      // lane, Enter.
      await page.locator("summary").focus();
      await page.keyboard.press("Tab");
      const at = () => page.evaluate(() => document.activeElement?.getAttribute("aria-label"));
      assert.match(await at(), /^turn storm: fell back \(B\)/);
      await page.keyboard.press("ArrowUp");
      assert.match(await at(), /^anthropic:work: cooldown \(rate_limit/);
      await page.keyboard.press("ArrowUp");
      assert.match(await at(), /^anthropic:personal: cooldown \(rate_limit/);
      await page.keyboard.press("ArrowDown");
      assert.match(await at(), /^anthropic:work: cooldown \(rate_limit/);
      await page.keyboard.press("ArrowDown");
      assert.match(await at(), /^turn storm: fell back \(B\)/);
      await page.keyboard.press("ArrowRight");
      assert.match(await at(), /^turn recovered: first try \(F\)/);
      await page.keyboard.press("ArrowLeft");
      await page.keyboard.press(" ");
      await page.waitForSelector('#turn-section article[data-turn="storm"]');
      await page.getByRole("button", { name: "Close turn" }).press("Enter");
      assert.match(await at(), /^turn storm: fell back \(B\)/, "closing the turn returns focus to its mark");
    });

    await t.test("a decisions filter shows exactly the matching records", async () => {
      const rows = () => page.locator("#decisions tbody tr").evaluateAll((els) => els.map((e) => [...e.cells].map((c) => c.textContent)));
      assert.equal((await rows()).length, decisions.length);
      await page.selectOption("#f-reason", "rate_limit");
      await page.locator("#decision-filter button").click();
      await page.waitForFunction((n) => document.querySelector("#decisions-note")?.textContent?.includes("with reason rate_limit"), null);
      const got = await rows();
      const want = decisions.filter((d) => d.reason === "rate_limit");
      assert.deepEqual(got.map((r) => r[0]), want.map((d) => `${d.seq}.${d.idx}`));
      for (const r of got) assert.equal(r[6], "rate_limit");
      await page.selectOption("#f-reason", "");
      await page.selectOption("#f-outcome", "candidate_succeeded");
      await page.locator("#decision-filter button").click();
      await page.waitForFunction(() => document.querySelector("#decisions-note")?.textContent?.includes("with outcome candidate_succeeded"), null);
      const ok = await rows();
      assert.deepEqual(ok.map((r) => [r[0], r[2], r[4]]), decisions.filter((d) => d.decision === "candidate_succeeded").map((d) => [`${d.seq}.${d.idx}`, d.turnId, d.decision]));
      // Keyboard: Enter on a row opens its turn.
      await page.locator("#decisions tbody tr").first().focus();
      await page.keyboard.press("Enter");
      await page.waitForSelector('#turn-section article[data-turn="storm"]');
      await page.getByRole("button", { name: "Close turn" }).click();
      await page.locator("#decisions-section").screenshot({ path: shotPath("viewer-decisions.png") });
    });

    await t.test("what-if lists the turns a changed config would change, never-tried candidates as unknown", async () => {
      const cfg = readFileSync(join(uiRoot, "test/fixtures/incident-day-no-fallback.yaml"), "utf8");
      await page.fill("#whatif-config", cfg);
      await page.locator("#whatif-form button[type=submit]").click();
      await page.waitForSelector("#whatif-changed");
      const rows = () => page.locator("#whatif-changed tbody tr").evaluateAll((els) => els.map((e) => [...e.cells].map((c) => c.textContent)));
      assert.deepEqual((await rows()).map((r) => r.slice(0, 4)), [["storm", "dm-alice", "fell_back (openai/gpt-5)", "exhausted"]]);
      assert.match(await page.locator("#whatif-result .summary").textContent(), /^1 turn would change of 5 re-decided; config sha256:/);
      await page.setInputFiles("#whatif-file", join(uiRoot, "test/fixtures/incident-day-other-fallback.yaml"));
      await page.waitForFunction(() => document.querySelector("#whatif-config")?.value.includes("gemini"));
      await page.locator("#whatif-form button[type=submit]").click();
      await page.waitForFunction(() => document.querySelector("#whatif-changed tbody tr.unknown"));
      assert.deepEqual((await rows()).map((r) => r.slice(0, 5)), [["storm", "dm-alice", "fell_back (openai/gpt-5)", "? unknown", "unknown from attempt #6: google/gemini-2.5-pro was never tried in reality"]]);
      await page.locator("#whatif-section").screenshot({ path: shotPath("viewer-whatif.png") });
      // A config that does not parse: the server's error names the key.
      await page.fill("#whatif-config", "agents: {defaults: {model: {primary: 3}}}\n");
      await page.locator("#whatif-form button[type=submit]").click();
      await page.waitForSelector("#whatif-result .error");
      assert.match(await page.locator("#whatif-result .error").textContent(), /agents\.defaults\.model\.primary: expected a string/);
    });

    await t.test("the agent picker switches to the other agent's ledger", async () => {
      await page.selectOption("#agent", "storm");
      await page.waitForSelector('#timeline[data-rendered="2"]');
      assert.match(await page.textContent("#status"), /^Agent storm: /);
      assert.deepEqual(errors, []);
    });
  } finally {
    await b?.close();
    await viewer?.stop();
    f.cleanup();
  }
});
