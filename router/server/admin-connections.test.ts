import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, it } from 'node:test';
import { AdminConnectionCap } from './admin-connections.ts';

/** A real HTTP server on 127.0.0.1 behind the cap; requests are held until `release`. */
async function cappedServer(max: number): Promise<{ server: Server; cap: AdminConnectionCap; port: number; held: ServerResponse[] }> {
  const cap = new AdminConnectionCap(max);
  const held: ServerResponse[] = [];
  const server = createServer((req, res) => {
    cap.begin(req, res);
    held.push(res);
  });
  server.on('connection', (socket: Socket) => cap.accept(socket));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, cap, port: (server.address() as AddressInfo).port, held };
}

async function open(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  socket.resume(); // answers are not read: without this, 'close' waits for them to be
  await once(socket, 'connect');
  return socket;
}

const closed = (socket: Socket) => (socket.closed ? Promise.resolve() : once(socket, 'close').then(() => undefined));
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

describe('admin connection cap', () => {
  const servers: Server[] = [];
  afterEach(() => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      server.close();
    }
  });

  it('at the cap, a new connection closes the oldest quiet one (idle or still sending its request)', async () => {
    const { server, cap, port } = await cappedServer(2);
    servers.push(server);
    const first = await open(port);
    first.write('GET /metrics HTTP/1.1\r\nHost: a\r\n'); // half-sent: quiet
    const second = await open(port);
    await settle();
    assert.equal(cap.count, 2);
    const third = await open(port);
    await closed(first);
    await settle();
    assert.deepEqual([first.destroyed, second.destroyed, third.destroyed], [true, false, false]);
    assert.equal(cap.count, 2);
    assert.equal(cap.evicted, 1);
    for (const s of [second, third]) s.destroy();
  });

  it('never closes a connection whose request is being answered; with every one busy, the newcomer is closed', async () => {
    const { server, cap, port, held } = await cappedServer(1);
    servers.push(server);
    const busy = await open(port);
    busy.write('GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n');
    while (held.length === 0) await settle();
    const newcomer = await open(port);
    await closed(newcomer);
    assert.equal(busy.destroyed, false);
    assert.deepEqual([cap.count, cap.refused, cap.evicted], [1, 1, 0]);
    // Once answered it is quiet again, and the next newcomer takes its place.
    (held[0] as ServerResponse).end('ok');
    await settle();
    const next = await open(port);
    await closed(busy);
    assert.equal(next.destroyed, false);
    assert.equal(cap.evicted, 1);
    next.destroy();
  });
});
