/**
 * The read stage: the whole body into memory within the limits, the body
 * budget and the minimum rate, and the facts routing needs from it. A JSON
 * body is scanned chunk by chunk as it arrives, so a bad one is refused at its
 * first bad byte; a multipart body once complete, within a bound.
 */
import type { IncomingMessage } from 'node:http';
import { SwitchyardError } from '../errors/errors.ts';
import type { BodyBudget } from './body-budget.ts';
import { JsonBodyScanner } from './json-body-scanner.ts';
import { readBody } from './read-body.ts';
import { multipartBodyFacts, type BodyFacts } from './routing-facts.ts';
import type { SlowBodyWatch } from './slow-body-watch.ts';

/** Limits of the read stage. */
export interface ReadLimits {
  /** Largest body accepted (bytes). */
  readonly maxBodyBytes: number;
  readonly maxJsonDepth: number;
  /** Bytes of canonical prompt prefix the scan keeps (0: none). */
  readonly promptPrefixBytes: number;
}

/** A body read in full, and its facts. */
export interface ReadBody {
  readonly facts: BodyFacts;
  /** The original bytes, forwarded unchanged. */
  readonly bytes: Buffer;
}

/** One request's read: its body, and its share of the budget to give back. */
export interface ReadRequest {
  /**
   * Reads the body. @throws SwitchyardError (400, 408, 413, 429 budget) and
   * ClientGoneError; after a throw the rest of the body stays unread.
   */
  body(): Promise<ReadBody>;
  /** Gives the body's bytes back to the budget; call once, when the exchange has settled. */
  release(): void;
}

export class BodyReader {
  readonly #budget: BodyBudget;
  readonly #slowBodies: SlowBodyWatch;
  readonly #limits: ReadLimits;

  constructor(budget: BodyBudget, slowBodies: SlowBodyWatch, limits: ReadLimits) {
    this.#budget = budget;
    this.#slowBodies = slowBodies;
    this.#limits = limits;
  }

  /** Opens the read of `req`'s body, a `kind` body. */
  open(kind: 'json' | 'multipart', req: IncomingMessage): ReadRequest {
    const reservation = this.#budget.open();
    const options = { limit: this.#limits.maxBodyBytes, reservation, slowBodies: this.#slowBodies };
    return {
      body: async () => {
        if (kind === 'multipart') {
          const contentType = req.headers['content-type'] ?? '';
          if (!/^multipart\/form-data/i.test(contentType)) throw new SwitchyardError('SWITCHYARD_BAD_REQUEST', 'This route takes a multipart/form-data body.');
          const bytes = await readBody(req, options);
          return { facts: multipartBodyFacts(bytes, contentType), bytes };
        }
        const scanner = new JsonBodyScanner({ maxDepth: this.#limits.maxJsonDepth, promptPrefixBytes: this.#limits.promptPrefixBytes });
        const bytes = await readBody(req, { ...options, inspect: (chunk) => scanner.push(chunk) });
        return { facts: scanner.finish(bytes), bytes };
      },
      release: () => reservation.release(),
    };
  }
}
