/**
 * The benchmark's side door to its Redis: how many commands the routers
 * sent (INFO's counters, read before and after a run), and emptying it
 * between runs so no run inherits another's session assignments. Each
 * question opens its own short connection, so a Redis that was killed and
 * restarted in between needs no reconnect logic here.
 */
import { createConnection } from 'node:net';

/** Commands Redis processed so far: the total and the calls per command. */
export interface CommandCounts {
  readonly total: number;
  /** Calls by lower-case command name (`evalsha`, `get`, ...). */
  readonly byCommand: Readonly<Record<string, number>>;
}

/** A numeric `field:value` line of an INFO reply; undefined when absent. */
export function infoField(info: string, field: string): number | undefined {
  const match = new RegExp(`^${field}:(\\d+(?:\\.\\d+)?)\\r?$`, 'm').exec(info);
  return match === null ? undefined : Number(match[1]);
}

/** Calls per command from INFO commandstats (`cmdstat_get:calls=12,...`); sub-commands keep their `a|b` name. */
export function commandCalls(info: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) out[match[1] as string] = Number(match[2]);
  return out;
}

/** What happened between two readings, less the reading's own commands (`info` is called once per reading). */
export function commandsBetween(before: CommandCounts, after: CommandCounts): CommandCounts {
  const byCommand: Record<string, number> = {};
  for (const [name, calls] of Object.entries(after.byCommand)) {
    const delta = calls - (before.byCommand[name] ?? 0) - (name === 'info' ? 1 : 0);
    if (delta > 0) byCommand[name] = delta;
  }
  return { total: Math.max(0, after.total - before.total - 1), byCommand };
}

/**
 * Sends one command on a fresh connection and returns its reply (a simple or
 * bulk string). A bare RESP exchange rather than a client library: a client
 * greets the server with commands of its own (HELLO), which the readings
 * would then count as the routers'.
 */
export function redisCommand(url: string, args: readonly string[], timeoutMs = 2000): Promise<string> {
  const { hostname, port } = new URL(url);
  const request = `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: hostname, port: Number(port || 6379) });
    let received = Buffer.alloc(0);
    const done = (err: Error | undefined, reply?: string) => {
      socket.destroy();
      if (err === undefined) resolve(reply as string);
      else reject(err);
    };
    socket.setTimeout(timeoutMs, () => done(new Error(`redis ${args[0] ?? ''}: no answer within ${timeoutMs} ms`)));
    socket.once('error', (err) => done(err));
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const lineEnd = received.indexOf('\r\n');
      if (lineEnd < 0) return;
      const head = received.subarray(0, lineEnd).toString();
      if (head.startsWith('+')) return done(undefined, head.slice(1));
      if (head.startsWith('-')) return done(new Error(`redis ${args[0] ?? ''}: ${head.slice(1)}`));
      if (!head.startsWith('$')) return done(new Error(`redis ${args[0] ?? ''}: unexpected reply ${head.slice(0, 40)}`));
      const length = Number(head.slice(1));
      if (received.length >= lineEnd + 2 + length) done(undefined, received.subarray(lineEnd + 2, lineEnd + 2 + length).toString());
    });
    socket.write(request);
  });
}

/** Reads the command counters of the Redis at `url`. */
export async function readCommandCounts(url: string): Promise<CommandCounts> {
  const info = await redisCommand(url, ['INFO', 'all']);
  return { total: infoField(info, 'total_commands_processed') ?? Number.NaN, byCommand: commandCalls(info) };
}

/** Deletes every key (FLUSHALL), so the next run starts with no shared state. */
export async function flushRedis(url: string): Promise<void> {
  await redisCommand(url, ['FLUSHALL']);
}
