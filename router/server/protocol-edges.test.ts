import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Server } from 'node:http';
import { createHttpServer, listen } from './http-server.ts';

/** Writes `text` on a fresh connection and collects everything until the server closes it. */
function exchange(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    let out = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (out += chunk));
    socket.on('close', () => resolve(out));
    socket.on('error', reject);
  });
}

function statusAndBody(response: string): { status: number; body: string } {
  return { status: Number(response.slice(9, 12)), body: response.slice(response.indexOf('\r\n\r\n') + 4) };
}

describe('protocol edges', () => {
  let server: Server;
  let port: number;
  const seen: string[] = [];
  before(async () => {
    const limits = { headersTimeoutMs: 5_000, requestTimeoutMs: 5_000, keepAliveTimeoutMs: 5_000, maxHeaderBytes: 16_384, maxBodyBytes: 1_024 };
    server = createHttpServer(limits, (req, res) => {
      seen.push(req.url ?? '');
      req.resume();
      req.on('end', () => res.end('ok'));
    }, () => undefined);
    port = await listen(server, '127.0.0.1:0', 16);
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('drops a fragment from the target before the listener sees it', async () => {
    const response = await exchange(port, 'GET /v1/models?x=1#part HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n');
    assert.equal(statusAndBody(response).status, 200);
    assert.equal(seen.at(-1), '/v1/models?x=1');
  });

  it('answers an unknown expectation, a missing Host and the * target in the OpenAI shape', async () => {
    const cases: [string, number, string][] = [
      ['POST /x HTTP/1.1\r\nHost: h\r\nExpect: foo\r\nContent-Length: 2\r\n\r\nhi', 417, 'SWITCHYARD_EXPECTATION_FAILED'],
      ['GET /x HTTP/1.1\r\n\r\n', 400, 'SWITCHYARD_BAD_REQUEST'],
      ['OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n', 400, 'SWITCHYARD_BAD_REQUEST'],
    ];
    const before = seen.length;
    for (const [request, status, code] of cases) {
      const { status: got, body } = statusAndBody(await exchange(port, request));
      assert.equal(got, status, request);
      assert.equal((JSON.parse(body) as { error: { code: string } }).error.code, code);
    }
    assert.equal(seen.length, before, 'none reached the listener');
  });

  it('lets HTTP/1.0 without Host through', async () => {
    assert.equal(statusAndBody(await exchange(port, 'GET /x HTTP/1.0\r\n\r\n')).status, 200);
  });

  it('refuses a declared body over the limit with 413 before any 100 Continue, and continues otherwise', async () => {
    const refused = await exchange(port, 'POST /x HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 1025\r\n\r\n');
    assert.ok(refused.startsWith('HTTP/1.1 413 '), refused);
    assert.ok(!refused.includes('100 Continue'));
    assert.equal((JSON.parse(statusAndBody(refused).body) as { error: { code: string } }).error.code, 'SWITCHYARD_BODY_TOO_LARGE');
    const accepted = await exchange(port, 'POST /x HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi');
    assert.ok(accepted.startsWith('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 '), accepted);
  });
});
