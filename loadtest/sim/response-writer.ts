/**
 * Writes a response body the way a real engine's socket might deliver it:
 * optionally in arbitrary splits (carrying part of each write over to the
 * next one, so pieces arrive separated in time), optionally dying after N
 * writes, and recording a SHA-256 of every byte it sent.
 */
import { createHash, type Hash } from 'node:crypto';
import type { ServerResponse } from 'node:http';

/** Splitting and fault behaviour of one writer. */
export interface WriterOptions {
  readonly split: boolean;
  /** Destroy the connection after this many writes (0: never). */
  readonly dieAfterChunks: number;
  /** Returns a float in [0, 1). */
  readonly random: () => number;
  /** Keep a SHA-256 of the bytes written, for {@link ResponseWriter.digest} (default true). */
  readonly hash?: boolean;
}

export class ResponseWriter {
  readonly #res: ServerResponse;
  readonly #options: WriterOptions;
  readonly #hash: Hash | undefined;
  #carry: Buffer = Buffer.alloc(0);
  #writes = 0;
  #dead = false;
  bytes = 0;

  constructor(res: ServerResponse, options: WriterOptions) {
    this.#res = res;
    this.#options = options;
    this.#hash = options.hash === false ? undefined : createHash('sha256');
  }

  /** True once the connection was killed on purpose or by the client. */
  get dead(): boolean {
    return this.#dead || this.#res.destroyed;
  }

  /**
   * Writes (part of) `text`; with splitting, a random tail waits for the next
   * write. Resolves once the socket can take more (a real engine's stream
   * slows down when its client reads slowly).
   */
  async write(text: string): Promise<void> {
    if (this.dead) return;
    let data = Buffer.concat([this.#carry, Buffer.from(text, 'utf8')]);
    this.#carry = Buffer.alloc(0);
    if (this.#options.split && data.length > 1) {
      const cut = 1 + Math.floor(this.#options.random() * (data.length - 1));
      this.#carry = data.subarray(cut);
      data = data.subarray(0, cut);
    }
    this.#emit(data);
    if (this.#res.writableNeedDrain && !this.dead) {
      await new Promise<void>((resolve) => {
        const done = () => {
          this.#res.off('drain', done);
          this.#res.off('close', done);
          resolve();
        };
        this.#res.on('drain', done);
        this.#res.on('close', done);
      });
    }
  }

  /** Flushes any carried bytes plus `text`, then ends the response. */
  end(text = ''): void {
    if (this.dead) return;
    const data = Buffer.concat([this.#carry, Buffer.from(text, 'utf8')]);
    this.#carry = Buffer.alloc(0);
    if (data.length > 0) this.#emit(data);
    if (!this.dead) this.#res.end();
  }

  /** Hex SHA-256 of all bytes written so far. */
  digest(): string {
    if (this.#hash === undefined) throw new Error('this writer keeps no digest (hash: false)');
    return this.#hash.copy().digest('hex');
  }

  #emit(data: Buffer): void {
    if (this.#options.dieAfterChunks > 0 && this.#writes >= this.#options.dieAfterChunks) {
      this.#dead = true;
      // Like a crashed engine: what was written still reaches the peer, then the connection drops.
      this.#res.socket?.destroySoon();
      return;
    }
    this.#writes++;
    this.bytes += data.length;
    this.#hash?.update(data);
    this.#res.write(data);
  }
}
