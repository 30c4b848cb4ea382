/**
 * A fake Redis for the hardening suite: a real TCP server on 127.0.0.1
 * speaking RESP2 that answers every command the router sends with a reply
 * the test chooses, or a random one. An in-process fake is allowed here, and
 * only here, because a real redis-server cannot be made to send malformed
 * replies on demand (a nil where the fleet script returns a list, a bulk
 * string of megabytes to a GET, an array nested where a count belongs): those
 * come from a compromised or buggy Redis, or a RESP proxy in the path, and
 * the router must survive them. Everything else in these suites runs against
 * a real redis-server.
 *
 * The server parses each command (an array of bulk strings, as ioredis sends
 * them) and answers in order; the ready check's INFO gets a valid answer
 * unless the responder says otherwise, so the router reaches the commands
 * that matter.
 */
import { createServer, type Server, type Socket } from 'node:net';

/** One RESP2 reply to send, built by the helpers below. */
export type RespReply = Buffer;

/** Chooses the reply to one command (`args[0]` is the command name, upper-cased). */
export type Responder = (args: readonly string[]) => RespReply;

export const resp = {
  nil: (): RespReply => Buffer.from('$-1\r\n'),
  nilArray: (): RespReply => Buffer.from('*-1\r\n'),
  ok: (): RespReply => Buffer.from('+OK\r\n'),
  simple: (text: string): RespReply => Buffer.from(`+${text}\r\n`),
  error: (text: string): RespReply => Buffer.from(`-${text}\r\n`),
  integer: (n: number | bigint): RespReply => Buffer.from(`:${n.toString()}\r\n`),
  bulk: (value: string | Buffer): RespReply => {
    const body = typeof value === 'string' ? Buffer.from(value) : value;
    return Buffer.concat([Buffer.from(`$${body.length}\r\n`), body, Buffer.from('\r\n')]);
  },
  array: (items: readonly RespReply[]): RespReply => Buffer.concat([Buffer.from(`*${items.length}\r\n`), ...items]),
};

/** A valid INFO answer for ioredis' ready check. */
export const INFO_REPLY = resp.bulk('# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n# Persistence\r\nloading:0\r\n');

/** The fake server. */
export class FakeRespServer {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  /** Replaced at will by the test. */
  responder: Responder;
  /** Commands seen, by name. */
  readonly seen = new Map<string, number>();
  /** Reply bytes sent. */
  bytesSent = 0;
  port = 0;

  constructor(responder: Responder) {
    this.responder = responder;
    this.#server = createServer((socket) => this.#serve(socket));
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.port = (this.#server.address() as { port: number }).port;
    return this;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async stop(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #serve(socket: Socket): void {
    this.#sockets.add(socket);
    socket.on('close', () => this.#sockets.delete(socket));
    socket.on('error', () => {});
    let pending: Buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      for (;;) {
        const parsed = parseCommand(pending);
        if (parsed === undefined) break;
        pending = pending.subarray(parsed.used);
        const name = (parsed.args[0] ?? '').toUpperCase();
        this.seen.set(name, (this.seen.get(name) ?? 0) + 1);
        const reply = this.responder([name, ...parsed.args.slice(1)]);
        this.bytesSent += reply.length;
        if (!socket.destroyed) socket.write(reply);
      }
    });
  }
}

/** One command from the front of `buffer` (`*N` then N bulk strings), or undefined while incomplete. */
function parseCommand(buffer: Buffer): { args: string[]; used: number } | undefined {
  const header = lineAt(buffer, 0);
  if (header === undefined) return undefined;
  if (!header.text.startsWith('*')) throw new Error(`fake Redis: not a command array: ${header.text.slice(0, 40)}`);
  const count = Number(header.text.slice(1));
  const args: string[] = [];
  let offset = header.next;
  for (let i = 0; i < count; i++) {
    const length = lineAt(buffer, offset);
    if (length === undefined) return undefined;
    const size = Number(length.text.slice(1));
    if (buffer.length < length.next + size + 2) return undefined;
    args.push(buffer.toString('utf8', length.next, length.next + size));
    offset = length.next + size + 2;
  }
  return { args, used: offset };
}

function lineAt(buffer: Buffer, offset: number): { text: string; next: number } | undefined {
  const end = buffer.indexOf('\r\n', offset);
  return end < 0 ? undefined : { text: buffer.toString('latin1', offset, end), next: end + 2 };
}

/** A small seeded PRNG (mulberry32): the same seed gives the same replies. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Limits of the random replies. */
export interface RandomReplyOptions {
  /** Largest bulk string (bytes); about one reply in 200 is between 1 MiB and this. */
  readonly maxBulkBytes: number;
}

/**
 * Random replies of every RESP2 shape and a spread of sizes, with the shapes
 * the router's replies resemble (fleet pairs with nil or nested counts,
 * engine ids of every length, quota answers of the wrong arity) mixed in.
 * INFO is answered validly nine times in ten so the connection gets ready.
 */
export function randomResponder(random: () => number, options: RandomReplyOptions): Responder {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const size = (): number => {
    const roll = random();
    if (roll < 0.005) return (1 << 20) + Math.floor(random() * Math.max(0, options.maxBulkBytes - (1 << 20)));
    if (roll < 0.05) return 1_024 + Math.floor(random() * 64 * 1_024);
    return Math.floor(random() * 64);
  };
  const text = (): string => pick(['e1', 'r0', '', '-1', '1e309', 'NaN', '__proto__', '12', 'x'.repeat(size())]);
  const value = (depth: number): RespReply => {
    const shapes: (() => RespReply)[] = [
      resp.nil,
      resp.nilArray,
      resp.ok,
      () => resp.integer(pick([0, 1, -1, 2 ** 53, 9_007_199_254_740_993n, 123])),
      () => resp.error(pick(['ERR fuzz', 'OOM command not allowed', 'LOADING loading', 'WRONGTYPE fuzz', 'NOSCRIPT No matching script', 'BUSY script'])),
      () => resp.bulk(text()),
      () => resp.bulk(Buffer.alloc(size(), 0xff)),
      // A fleet-like pair list: a replica id with nil, an integer, a string or a list of counts.
      () => resp.array([resp.bulk(text()), pick([resp.nil(), resp.integer(3), resp.bulk('e1'), resp.array([resp.bulk('e1'), resp.bulk(text())])])]),
    ];
    if (depth < 3) shapes.push(() => resp.array(Array.from({ length: Math.floor(random() * 6) }, () => value(depth + 1))));
    return pick(shapes)();
  };
  return (args) => {
    if (args[0] === 'INFO' && random() < 0.9) return INFO_REPLY;
    return value(0);
  };
}
