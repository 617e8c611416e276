// The page alone in Chromium on a synthetic ledger (test/synthetic.mjs):
// 10,000 turns and 100 profiles render with aggregation, keyboard
// navigation reaches and opens the marks, and a 401 brings up the token
// form whose token then goes on every /v1 call. The render time is
// measured and written to test-output/render.json (a figure to report,
// not a pass/fail bound: the machine is shared).

import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { launch, sayskip, shotPath } from "./browser.mjs";
import { generate, serveSynthetic } from "./synthetic.mjs";

test("10,000 turns and 100 profiles render aggregated; Enter on a bar zooms in", { skip: sayskip() || false }, async () => {
  const b = await launch();
  let close = async () => {};
  try {
    const page = await b.context.newPage();
    const r = await measure(page, 20, (c) => (close = c));
    assert.equal(r.turns, 10000);
    assert.equal(r.profiles, 100);
    assert.equal(r.windows, 300, "every profile window is drawn");
    assert.ok(r.bars > 0, "overlapping marks are aggregated");
    assert.ok(r.elements < 5000, `zoomed out, ${r.elements} elements stand for 10,300 items`);

    // Keyboard: Tab reaches the chart (one tab stop), arrows walk it, Enter on a bar zooms in.
    await page.locator("summary").focus();
    await page.keyboard.press("Tab");
    const first = await page.evaluate(() => document.activeElement?.getAttribute("aria-label"));
    assert.match(first, /^anthropic:key-000: cooldown \(rate_limit, model claude-opus-4-6\) from 2026-03-02T09:\d\d:\d\d\.\d{3}Z until /);
    const tip = await page.locator("#timeline-tip").textContent();
    assert.ok(tip.startsWith(first), "focus shows the same details as hover");
    // Down past the 100 profile lanes to the first session lane.
    for (let i = 0; i < 100; i++) await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Home");
    const bar = await page.evaluate(() => document.activeElement?.getAttribute("aria-label"));
    assert.match(bar, /^\d+ turns from 2026-03-02T09:00:00\.000Z to 2026-03-02T09:00:\d\d\.\d{3}Z: \d+ first try \(F\)/);
    await page.keyboard.press("Enter");
    await page.waitForSelector('#timeline[data-rendered="2"]');
    const zoomed = await page.evaluate(() => window.fledgerViewer.renders[1]);
    assert.ok(zoomed.turns < 1000 && zoomed.turns > 0, `zoomed in to ${zoomed.turns} turns`);
    // The bar's range, padded by 5 % (at least 1 s) each side.
    const [, a, z] = /from (\S+) to (\S+):/.exec(bar);
    const pad = Math.max(1000, (Date.parse(z) - Date.parse(a)) * 0.05);
    assert.equal(await page.inputValue("#since"), new Date(Date.parse(a) - pad).toISOString());
    assert.equal(await page.inputValue("#until"), new Date(Date.parse(z) + pad).toISOString());
  } finally {
    await b.close();
    await close();
  }
});

test("10,000 turns in 200 sessions stand alone: shapes, one path per outcome per lane; keyboard and mouse still name each", { skip: sayskip() || false }, async () => {
  const b = await launch();
  let close = async () => {};
  try {
    const page = await b.context.newPage();
    const r = await measure(page, 200, (c) => (close = c));
    assert.equal(r.elements, 10300, "every turn and window is an item");
    assert.equal(r.bars, 0);
    assert.equal(await page.locator("#timeline .m").count(), 0, "no element per dense mark");
    const paths = await page.locator("#timeline path.mk").count();
    assert.ok(paths <= 200 * 7, `${paths} shape paths`);
    // Keyboard: from the first profile window down to session-00, then along it.
    await page.locator("summary").focus();
    await page.keyboard.press("Tab");
    for (let i = 0; i < 100; i++) await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Home");
    const named = () => page.evaluate(() => [document.activeElement?.id, document.activeElement?.getAttribute("aria-label")]);
    const [id, first] = await named();
    assert.equal(id, "mark-proxy");
    assert.match(first, /^turn t00000: [a-z ]+ \([A-Z]\) at 2026-03-02T09:00:00\.000Z, session session-00, /);
    await page.keyboard.press("ArrowRight");
    assert.deepEqual(await named(), ["mark-proxy", "turn t00200: first try (F) at 2026-03-02T09:01:12.000Z, session session-00, anthropic/claude-opus-4-6 → anthropic/claude-opus-4-6, 1 attempt"]);
    assert.match(await page.locator("#timeline-tip").textContent(), /^turn t00200 — F first try/);
    // Mouse: hovering a shape names its turn; a click opens it.
    const box = await page.locator("#mark-proxy").boundingBox();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    assert.match(await page.locator("#timeline-tip").textContent(), /^turn t00200 — F first try/);
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    await page.waitForFunction(() => document.querySelector("#status")?.textContent?.startsWith("Turn t00200"));
  } finally {
    await b.close();
    await close();
  }
});

const figures = [];

// measure loads the synthetic ledger of 10,000 turns and 100 profiles in
// `sessions` sessions, and records how long the page took.
async function measure(page, sessions, onClose) {
  const data = generate({ turns: 10000, profiles: 100, sessions });
  const srv = await serveSynthetic(data);
  onClose(srv.close);
  const t = Date.now();
  await page.goto(`${srv.base}/ui/`);
  await page.waitForSelector('#timeline[data-rendered="1"]', { timeout: 60_000 });
  const wallMs = Date.now() - t;
  const r = await page.evaluate(() => window.fledgerViewer.renders[0]);
  const windows = await page.locator("#timeline g.w").count();
  const marks = await page.locator("#timeline .m, #timeline path.mk").count();
  const bars = await page.locator("#timeline rect.agg").count();
  const figure = { sessions, turns: r.turns, profiles: r.profiles, windows, elements: r.elements, marks, bars, renderMs: Math.round(r.ms), buildMs: Math.round(r.buildMs), fetchMs: Math.round(r.fetchMs), pageReadyMs: Math.round(r.at), wallMs };
  console.log(`render of ${r.turns} turns / ${r.profiles} profiles / ${sessions} sessions: ${JSON.stringify(figure)}`);
  figures.push(figure);
  writeFileSync(shotPath("render.json"), JSON.stringify(figures, null, 2) + "\n");
  await page.screenshot({ path: shotPath(`viewer-10k-${sessions}-sessions.png`) });
  return figure;
}

test("a 401 asks for the token once; the page then sends it as Bearer on every /v1 call", { skip: sayskip() || false }, async () => {
  const b = await launch();
  let close = async () => {};
  try {
    const data = generate({ turns: 50, profiles: 3, sessions: 2 });
    const srv = await serveSynthetic(data, { token: "s3cret" });
    close = srv.close;
    const seen = srv.seen;
    const page = await b.context.newPage();
    await page.goto(`${srv.base}/ui/`);
    await page.waitForSelector("#token-dialog:not([hidden])");
    assert.equal(await page.evaluate(() => document.activeElement?.id), "token", "the token field has focus");
    await page.fill("#token", "s3cret");
    await page.keyboard.press("Enter");
    await page.waitForSelector('#timeline[data-rendered="1"]');
    await page.locator("#timeline .m").first().click();
    await page.waitForSelector("#turn-section:not([hidden]), #status:has-text('Turn t00000')");
    const after = seen.slice(1);
    assert.ok(after.length >= 2);
    assert.deepEqual([...new Set(after.map((s) => s.authorization))], ["Bearer s3cret"]);
    assert.equal(seen[0].authorization, "");
    const stored = await page.evaluate(() => JSON.stringify(localStorage) + JSON.stringify(sessionStorage) + document.cookie);
    assert.ok(!stored.includes("s3cret"), "the token is kept in memory only");
  } finally {
    await b.close();
    await close();
  }
});

test("a small ledger: lanes in natural order, Escape closes the turn, a running what-if can be cancelled, the URL keeps the view; an empty ledger says so", { skip: sayskip() || false }, async () => {
  const b = await launch({ viewport: { width: 1100, height: 800 } });
  const servers = [];
  try {
    const data = generate({ turns: 60, profiles: 2, sessions: 12, sessionName: (i) => `sess-${i}` });
    const srv = await serveSynthetic(data);
    servers.push(srv);
    const page = await b.context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${srv.base}/ui/`);
    await page.waitForSelector('#timeline[data-rendered="1"]');
    const lanes = await page.locator("#timeline .lane-label").evaluateAll((els) => els.map((e) => e.dataset.name));
    assert.deepEqual(lanes.slice(2), Array.from({ length: 12 }, (_, i) => `sess-${i}`), "numbers sort by value");
    assert.match(await page.textContent("#status"), /^Agent main: 60 turns, 2 profiles from /);

    // Escape closes the turn view and gives the focus back to the mark.
    await page.locator('#timeline .m[data-turn="t00013"]').click();
    await page.waitForSelector('#turn-section article[data-turn="t00013"]');
    await page.keyboard.press("Escape");
    assert.equal(await page.locator("#turn-section").isHidden(), true);
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("data-turn")), "t00013");

    // A running what-if: Run disabled and saying so; Cancel aborts the request.
    await page.fill("#whatif-config", "agents: {}\n");
    await page.locator("#whatif-run").click();
    await page.waitForSelector("#whatif-cancel:not([hidden])");
    assert.equal(await page.locator("#whatif-run").isDisabled(), true);
    assert.equal(await page.textContent("#whatif-run"), "Running…");
    await page.locator("#whatif-run").click({ force: true });
    await page.locator("#whatif-cancel").click();
    await page.waitForSelector("#whatif-cancel[hidden]", { state: "attached" });
    assert.equal(await page.textContent("#whatif-result"), "What-if cancelled.");
    assert.equal(await page.locator("#whatif-run").isDisabled(), false);
    for (let i = 0; i < 50 && srv.whatIf.aborted === 0; i++) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(srv.whatIf, { started: 1, aborted: 1 }, "one request, aborted (a click on the disabled Run sent none)");

    // A file over the server's 1 MiB body limit is refused unread.
    await page.setInputFiles("#whatif-file", { name: "big.yaml", mimeType: "text/yaml", buffer: Buffer.alloc(2 << 20, 97) });
    await page.waitForSelector("#whatif-result .error");
    assert.equal(await page.textContent("#whatif-result .error"), "big.yaml is 2.0 MiB; the server takes at most 1.0 MiB in a request, so it was not loaded.");
    assert.equal(await page.inputValue("#whatif-config"), "agents: {}\n");

    // The range and the filters live in the URL: a reload keeps them, Back walks them.
    const first = [await page.inputValue("#since"), await page.inputValue("#until")];
    await page.locator("#zoom-in").click();
    await page.waitForSelector('#timeline[data-rendered="2"]');
    const zoomed = [await page.inputValue("#since"), await page.inputValue("#until")];
    await page.selectOption("#f-reason", "rate_limit");
    await page.locator("#decision-filter button").click();
    await page.waitForFunction(() => document.querySelector("#decisions-note")?.textContent?.includes("with reason rate_limit"));
    assert.equal(new URL(page.url()).search, `?agent=main&since=${encodeURIComponent(zoomed[0])}&until=${encodeURIComponent(zoomed[1])}&reason=rate_limit`);
    await page.reload();
    await page.waitForSelector('#timeline[data-rendered="1"]');
    assert.deepEqual([await page.inputValue("#since"), await page.inputValue("#until"), await page.inputValue("#f-reason")], [...zoomed, "rate_limit"]);
    await page.goBack();
    await page.waitForSelector('#timeline[data-rendered="2"]');
    assert.deepEqual([await page.inputValue("#since"), await page.inputValue("#until"), await page.inputValue("#f-reason")], [...zoomed, ""]);
    await page.goBack();
    await page.waitForSelector('#timeline[data-rendered="3"]');
    assert.deepEqual([await page.inputValue("#since"), await page.inputValue("#until")], first);
    assert.deepEqual(errors, []);

    // An empty ledger ("profiles": null, no range): no error, and the status says so.
    const none = await serveSynthetic(generate({ turns: 0, profiles: 0 }), { empty: true });
    servers.push(none);
    await page.goto(`${none.base}/ui/`);
    await page.waitForSelector('#timeline[data-rendered="1"]');
    assert.equal(await page.textContent("#status"), "Agent main: the ledger has no events for this agent (folded to seq 0).");
    assert.equal(await page.textContent("#timeline"), "The ledger has no events for agent main.");
    assert.deepEqual(errors, []);
  } finally {
    await b.close();
    for (const s of servers) await s.close();
  }
});
