// toProviderError: what runTurn reports for a value a call function threw.

import assert from "node:assert/strict";
import { test } from "node:test";

import { ProviderCallError, toProviderError, uuidv7, type ProviderError } from "../src/index.js";

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

for (const c of cases) {
  test(`toProviderError: ${c.name}`, () => {
    assert.deepEqual(JSON.parse(JSON.stringify(toProviderError(c.thrown))), JSON.parse(JSON.stringify(c.want)));
  });
}

test("uuidv7 carries the time and the version and variant bits", () => {
  const id = uuidv7(0x0192_3456_789a);
  assert.match(id, /^01923456-789a-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
});
