// The turn outcomes and profile states with the letter and words that
// stand beside their colour (never colour alone).

export interface Meta {
  letter: string;
  label: string;
  words: string;
}

export const OUTCOMES: Record<string, Meta> = {
  first_try: { letter: "F", label: "first try", words: "succeeded on the first attempt" },
  rotated: { letter: "R", label: "rotated", words: "succeeded on the selected model after rotating auth profiles" },
  fell_back: { letter: "B", label: "fell back", words: "succeeded on another model of the chain" },
  exhausted: { letter: "X", label: "exhausted", words: "every candidate failed" },
  stopped: { letter: "S", label: "stopped", words: "stopped by an error that ends the turn" },
  switched: { letter: "W", label: "switched", words: "a live model switch by the user" },
  running: { letter: "…", label: "running", words: "not finished at the end of the ledger read" },
};

export const STATES: Record<string, Meta> = {
  cooldown: { letter: "C", label: "cooldown", words: "cooling down after a failure (reason, model scope)" },
  disabled: { letter: "D", label: "disabled", words: "disabled (billing or auth_permanent)" },
  blocked: { letter: "K", label: "blocked", words: "blocked until a provider reset" },
};

export function outcomeMeta(o: string): Meta {
  return OUTCOMES[o] ?? { letter: "?", label: o, words: o };
}

export function stateMeta(s: string): Meta {
  return STATES[s] ?? { letter: "?", label: s, words: s };
}

// cls turns a value into a safe CSS class suffix.
export function cls(s: string): string {
  return s.replace(/[^a-z0-9_-]/gi, "_");
}
