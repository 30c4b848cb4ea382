/**
 * A cap on the size of one Redis reply. ioredis has no such option: its
 * decoder keeps a bulk string's chunks until the whole string has arrived,
 * so one 256 MiB reply to a session GET cost a replica about 220 MB of RSS,
 * and a Redis (or a proxy in the path) sending such replies on purpose could
 * end every replica at its heap cap. Validating a reply after it arrived is
 * too late for that; this counts the bytes of the reply being read and drops
 * the connection once they pass the cap. The decoder and what it buffered go
 * with the connection (destroyed at once, so nothing more is read); the commands in flight fail as on any lost connection
 * (their callers fall back to local state) and the client reconnects.
 *
 * How a reply's end is known without parsing RESP a second time: the
 * connection's decoder resolves a command synchronously for every reply it
 * completes, so a chunk that completed a reply shrinks the command queue
 * while it is decoded. A chunk that did not adds to the reply in progress.
 * The count is approximate by at most one chunk (the bytes after the last
 * reply a chunk completed are not counted), which a cap of megabytes does
 * not notice.
 */
import { Cluster, type Redis } from 'ioredis';
import type { RedisClient } from './redis-client.ts';

/** Largest reply accepted (bytes): far above any real one (a fleet read of 50 replicas and 200 engines is ~400 KB). */
export const MAX_REPLY_BYTES = 8 * 1024 * 1024;

/**
 * Watches every connection of `client` (each cluster node's too) and drops
 * one whose reply in progress passes `maxBytes`; `dropped` is told each time.
 */
export function guardReplySize(client: RedisClient, maxBytes: number, dropped: () => void): void {
  if (client instanceof Cluster) {
    client.on('+node', (node: Redis) => guardConnection(node, maxBytes, dropped));
    for (const node of client.nodes()) guardConnection(node, maxBytes, dropped);
    return;
  }
  guardConnection(client, maxBytes, dropped);
}

/** The command queue ioredis keeps per connection (not in its public types). */
interface Queued {
  readonly commandQueue: { readonly length: number };
}

function guardConnection(connection: Redis, maxBytes: number, dropped: () => void): void {
  const queued = connection as unknown as Queued;
  // 'connect' is emitted after ioredis attached its decoder to the new socket.
  connection.on('connect', () => {
    const stream = connection.stream;
    let inProgress = 0;
    let queuedBefore = 0;
    // Before the decoder: the queue as it was. After it: whether this chunk completed a reply.
    stream.prependListener('data', () => {
      queuedBefore = queued.commandQueue.length;
    });
    stream.on('data', (chunk: Buffer) => {
      if (queued.commandQueue.length < queuedBefore) {
        inProgress = 0;
        return;
      }
      inProgress += chunk.length;
      if (inProgress <= maxBytes) return;
      inProgress = 0;
      dropped();
      // Destroyed, not ended: an ended socket keeps reading (and the decoder keeps buffering) until the
      // peer's FIN or ioredis' disconnect timeout. ioredis sees the close and reconnects.
      stream.destroy();
    });
  });
}
