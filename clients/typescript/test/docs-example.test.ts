// The example of docs/api.md "Use from OpenClaw or any Node gateway"
// compiles under tsc --strict against the built package (imported by its
// own name, as a gateway that installed it would).

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { packageRoot, repoRoot } from "./server.js";

const heading = "## Use from OpenClaw or any Node gateway";

/** The first ```ts block of the section under heading. */
export function example(markdown: string): string {
  const at = markdown.indexOf(`\n${heading}\n`);
  assert.ok(at >= 0, `docs/api.md has no "${heading}"`);
  const section = markdown.slice(at + heading.length + 2).split(/\n## /)[0] ?? "";
  const m = /```ts\n([\s\S]*?)\n```/.exec(section);
  assert.ok(m?.[1] !== undefined, `"${heading}" has no ts block`);
  return m[1];
}

test("the docs/api.md example compiles under tsc --strict", () => {
  const code = example(readFileSync(join(repoRoot, "docs/api.md"), "utf8"));
  assert.match(code, /from "@fledger\/client"/);
  const dir = join(packageRoot, "dist/docs-example");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "example.ts");
  writeFileSync(file, code + "\n");
  const tsc = join(packageRoot, "node_modules/typescript/bin/tsc");
  const args = [tsc, "--noEmit", "--strict", "--target", "es2022", "--module", "nodenext", "--moduleResolution", "nodenext", "--types", "node", "--skipLibCheck", file];
  try {
    execFileSync(process.execPath, args, { cwd: packageRoot, encoding: "utf8", stdio: "pipe" });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    assert.fail(`the example does not compile:\n${e.stdout ?? ""}${e.stderr ?? ""}`);
  }
});
