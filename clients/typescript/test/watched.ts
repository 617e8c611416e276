// WatchedClient: a FledgerClient whose test can wait for every request
// it made (runTurn's background ones included) to end, in event order
// rather than by time.

import { FledgerClient, type SendOptions } from "../src/index.js";

/**
 * A client that counts its requests in progress (re-sends included).
 * idle() resolves once none is left: a request's end is counted a
 * macrotask after it settles, after everything its answer sets off at
 * once (a request runTurn sends on it included), so idle() is reached
 * only when nothing is in progress and nothing more was started.
 */
export class WatchedClient extends FledgerClient {
  /** Requests in progress (each counted until a macrotask after it settles). */
  pending = 0;
  #idle: (() => void)[] = [];

  override async request<T>(method: string, path: string, opts?: SendOptions): Promise<T> {
    this.pending++;
    try {
      return await super.request<T>(method, path, opts);
    } finally {
      setImmediate(() => {
        this.pending--;
        if (this.pending === 0) for (const done of this.#idle.splice(0)) done();
      });
    }
  }

  /** Resolves when no request is in progress (at once, a macrotask later, when none is). */
  idle(): Promise<void> {
    return new Promise((done) => setImmediate(() => (this.pending === 0 ? done() : this.#idle.push(done))));
  }
}
