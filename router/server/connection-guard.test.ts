import assert from 'node:assert/strict';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { ConnectionGuard } from './connection-guard.ts';

/** A real HTTP server on 127.0.0.1 whose connections go through the guard. */
async function serve(guard: ConnectionGuard): Promise<{ port: number; close: () => Promise<void> }> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    res.end(guard.begin(req, res) ? 'ok' : 'over');
  });
  server.on('connection', (socket: Socket) => guard.accept(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

const open = (port: number) =>
  new Promise<Socket>((resolve) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
  });

/** A keep-alive connection that has had one request answered and now idles. */
const answered = (port: number) =>
  new Promise<Socket>((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n'));
    socket.once('data', () => resolve(socket));
  });

const get = (port: number) =>
  new Promise<string>((resolve, reject) => {
    const req = request({ port, host: '127.0.0.1', path: '/', agent: false }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve(text));
    });
    req.on('error', reject);
    req.end();
  });

const closed = (socket: Socket): Promise<void> => new Promise<void>((resolve) => (socket.destroyed ? resolve() : socket.once('close', () => resolve())));

describe('connection guard', () => {
  it('at the cap, evicts the longest-idle connection to let a newcomer in', async () => {
    const guard = new ConnectionGuard({ maxConnections: 3, maxPerClient: 0 });
    const server = await serve(guard);
    const fresh = await open(server.port); // connected, first request not sent yet: never evicted
    const idle = [await answered(server.port), await answered(server.port)];
    assert.equal(await get(server.port), 'ok');
    await closed(idle[0] as Socket);
    assert.equal(guard.evicted, 1);
    assert.equal((idle[1] as Socket).destroyed, false);
    assert.equal(fresh.destroyed, false);
    for (const socket of [fresh, ...idle]) socket.destroy();
    await server.close();
  });

  it('answers requests beyond one client address’s share with a refusal, and counts the share down as connections close', async () => {
    const guard = new ConnectionGuard({ maxConnections: 100, maxPerClient: 2 });
    const server = await serve(guard);
    const held = [await open(server.port), await open(server.port)];
    assert.equal(await get(server.port), 'over');
    for (const socket of held) socket.destroy();
    while (guard.count > 0) await new Promise((resolve) => setTimeout(resolve, 5)); // the server sees the closes
    assert.equal(await get(server.port), 'ok');
    await server.close();
  });
});
