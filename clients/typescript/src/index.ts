// @fledger/client: the typed HTTP client of `fledger serve` and runTurn,
// its step loop. Generated types: ./schema.js (schemas/openapi.v1.yaml).
export * from "./client.js";
export * from "./provider-error.js";
export * from "./turn.js";
export type { components, operations, paths } from "./schema.js";
