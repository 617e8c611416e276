// Builds the page: src/main.ts bundled and minified by esbuild into
// dist/app.js. The bundle is committed (ui/embed.go embeds it with
// src/index.html and src/app.css, so `go build` needs no node);
// `node build.mjs --check` builds in memory and fails when the committed
// bundle differs (the CI's check that it is not stale).
import { build } from "esbuild";
import { readFileSync, writeFileSync, mkdirSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const check = process.argv.includes("--check");
const res = await build({
  entryPoints: [join(here, "src/main.ts")],
  bundle: true,
  minify: true,
  format: "iife",
  target: "es2022",
  legalComments: "none",
  write: false,
  charset: "utf8",
});
const out = { "app.js": res.outputFiles[0].text };
let stale = [];
// The page's weight: the bundle and the two files served beside it.
let total = ["src/index.html", "src/app.css"].reduce((n, f) => n + readFileSync(join(here, f)).length, 0);
for (const [name, text] of Object.entries(out)) {
  const p = join(here, "dist", name);
  total += Buffer.byteLength(text);
  if (check) {
    if (!existsSync(p) || readFileSync(p, "utf8") !== text) stale.push("ui/dist/" + name);
  } else {
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, text);
  }
}
if (stale.length > 0) {
  console.error(`${stale.join(", ")} stale: run npm run build in ui/ and commit ui/dist`);
  process.exit(1);
}
console.log(`${check ? "ui/dist/app.js is up to date" : "built ui/dist/app.js"}; the page weighs ${total} bytes`);
