// toProviderError: what runTurn reports for a value a call function threw.

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  cut,
  hasDotSegment,
  minimalError,
  pathSegment,
  ProviderCallError,
  reportLimits,
  safeJSON,
  toProviderError,
  uuidv7,
  type ProviderError,
} from "../src/index.js";

const cases: { name: string; thrown: unknown; want: ProviderError }[] = [
  {
    name: "an SDK error with Headers, a body and a cause",
    thrown: Object.assign(new Error("Rate limited"), {
      status: 429,
      code: "rate_limit_exceeded",
      type: "rate_limit_error",
      headers: new Headers({ "Retry-After": "7", "x-request-id": "r1" }),
      error: { message: "slow down" },
      cause: Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }),
    }),
    want: {
      status: 429,
      code: "rate_limit_exceeded",
      type: "rate_limit_error",
      name: "Error",
      message: "Rate limited",
      body: { message: "slow down" },
      headers: { "retry-after": "7", "x-request-id": "r1" },
      cause: { code: "ECONNRESET", name: "Error", message: "socket hang up" },
    },
  },
  {
    name: "a fetch-style statusCode and plain-object headers",
    thrown: { statusCode: 503, message: "overloaded", headers: { "retry-after": 2 } },
    want: { status: 503, message: "overloaded", headers: { "retry-after": "2" } },
  },
  { name: "a string", thrown: "boom", want: { message: "boom" } },
  {
    name: "a ProviderCallError as given",
    thrown: new ProviderCallError({ status: 400, message: "bad tool call" }, { toolStarted: true }),
    want: { status: 400, message: "bad tool call" },
  },
];

const selfRef: Record<string, unknown> = { a: 1 };
selfRef.self = selfRef;
const shared = { x: 1 };
const cyclicCause: Record<string, unknown> = { message: "loop" };
cyclicCause.cause = cyclicCause;
const throwing = Object.defineProperty({ status: 500 }, "message", {
  enumerable: true,
  get() {
    throw new Error("getter");
  },
});
/** The error a cause chain of "loop"s becomes: depth causes below the outermost. */
const loops = (depth: number): ProviderError => (depth === 0 ? { message: "loop" } : { message: "loop", cause: loops(depth - 1) });
const bodyMarker = (n: number): string => `\n…[cut ${n} characters]…\n`;

cases.push(
  {
    name: "a 10 MB HTML body keeps its head and tail",
    thrown: { status: 502, body: "<html>" + "x".repeat(10 << 20) + "</html>" },
    want: {
      status: 502,
      body: "<html>" + "x".repeat(reportLimits.bodyHead - 6) + bodyMarker((10 << 20) + 13 - reportLimits.bodyHead - reportLimits.bodyTail) +
        "x".repeat(reportLimits.bodyTail - 7) + "</html>",
    },
  },
  { name: "a body that refers to itself", thrown: { status: 502, body: selfRef }, want: { status: 502, body: { a: 1, self: "[Circular]" } } },
  {
    name: "an object met twice is not a cycle",
    thrown: { body: { a: shared, b: [shared, shared] } },
    want: { body: { a: { x: 1 }, b: [{ x: 1 }, { x: 1 }] } },
  },
  { name: "a BigInt", thrown: { status: 502n, code: "E", body: { id: 12345678901234567890n } }, want: { status: 502, code: "E", body: { id: "12345678901234567890" } } },
  { name: "functions and symbols are dropped", thrown: { body: { f: () => 1, s: Symbol("s"), k: "v" } }, want: { body: { k: "v" } } },
  { name: "a cause that is itself stops at the cause depth", thrown: cyclicCause, want: loops(reportLimits.causes) },
  { name: "a throwing getter leaves its field out", thrown: throwing, want: { status: 500 } },
  {
    name: "a status fledger refuses is left out; a numeric string is a number; a gRPC code stays",
    thrown: { status: 1e20, cause: { status: " 429 ", cause: { status: "RESOURCE_EXHAUSTED", cause: { status: 429.5 } } } },
    want: { cause: { status: 429, cause: { status: "RESOURCE_EXHAUSTED", cause: {} } } },
  },
  { name: "a message that is an object", thrown: { message: { error: { message: "nope", n: 1n } } }, want: { message: { error: { message: "nope", n: "1" } } } },
);
for (const c of cases) {
  test(`toProviderError: ${c.name}`, () => {
    assert.deepEqual(JSON.parse(JSON.stringify(toProviderError(c.thrown))), JSON.parse(JSON.stringify(c.want)));
  });
}

test("uuidv7 carries the time and the version and variant bits", () => {
  const id = uuidv7(0x0192_3456_789a);
  assert.match(id, /^01923456-789a-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
});

test("a report is bounded whatever the error holds", () => {
  const big = "y".repeat(1 << 20);
  const headers = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`h${i}`, big]));
  const deep = (d: number): Record<string, unknown> => ({ message: big, body: { big }, headers, code: big, cause: d === 0 ? undefined : deep(d - 1) });
  const text = JSON.stringify(toProviderError(deep(40)));
  assert.ok(text.length < 400_000, `${text.length} characters`);
});

test("cut keeps a surrogate pair whole", () => {
  assert.equal(cut("ab😀cd", 3, 0), "ab\n…[cut 4 characters]…\n");
  assert.equal(cut("ab😀cd", 0, 3), "\n…[cut 4 characters]…\ncd");
  assert.equal(cut("ab😀cd", 0, 4), "\n…[cut 2 characters]…\n😀cd");
  assert.equal(cut("abc", 3, 0), "abc");
});

test("safeJSON writes what JSON.stringify throws on", () => {
  let deep: unknown = 1;
  for (let i = 0; i < 100_000; i++) deep = [deep];
  assert.equal(safeJSON(deep)?.startsWith('"[unserialisable: RangeError'), true);
  assert.equal(safeJSON({ toJSON: () => { throw new Error("no"); } }), '"[unserialisable: Error: no]"');
  assert.equal(safeJSON(Symbol("s")), undefined);
});

test("minimalError keeps status, code and a bounded message", () => {
  assert.deepEqual(minimalError({ status: 502, code: "E", type: "t", body: "b".repeat(100), message: "m".repeat(5000), headers: { a: "b" } }), {
    status: 502,
    code: "E",
    message: "m".repeat(reportLimits.minimalMessage) + `\n…[cut ${5000 - reportLimits.minimalMessage} characters]…\n`,
  });
  assert.deepEqual(minimalError({ message: { a: 1 } }), { message: '{"a":1}' });
});

const segments: { name: string; want: string; dot: boolean }[] = [
  { name: ".", want: "%2E", dot: true },
  { name: "..", want: "%2E%2E", dot: true },
  { name: "...", want: "...", dot: false },
  { name: ".a", want: ".a", dot: false },
  { name: "a/..", want: "a%2F..", dot: false },
  { name: "tg:1 2?#", want: "tg%3A1%202%3F%23", dot: false },
  { name: "%2e", want: "%252e", dot: false },
];
for (const c of segments) {
  test(`pathSegment ${JSON.stringify(c.name)}`, () => {
    assert.equal(pathSegment(c.name), c.want);
    assert.equal(hasDotSegment(`/v1/sessions/main/${pathSegment(c.name)}/model`), c.dot);
  });
}
