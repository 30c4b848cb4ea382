/**
 * vLLM shares prefix-cache blocks between all requests with the same
 * `cache_salt`, and a hit answers sooner. With API keys on, the router sent
 * every tenant's body as the client wrote it: two tenants' requests reached
 * the engine with no cache_salt at all (the same, empty partition), so one
 * tenant could time its own requests to learn which prefixes another had
 * sent. Now the router sets `cache_salt` from the tenant (combined with the
 * client's own) on chat and completions bodies: the engine sees one salt per
 * tenant, another for each client salt, and other routes unchanged.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { postJson, startInProcessRouter, type StartedRouter } from '../kit/harness.ts';

const MODEL = 'm-cache-salt';
const KEY_A = 'sk-salt-tenant-a-71c2e0';
const KEY_B = 'sk-salt-tenant-b-3f9d54';

/** What the engine received: path, the body's cache_salt, the body's SHA-256. */
interface Seen {
  readonly path: string;
  readonly cacheSalt: unknown;
  readonly sha256: string;
}

/** The smallest engine that records bodies: model list, empty metrics, one answer for every POST. */
function recordingEngine(seen: Seen[]): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url === '/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: MODEL, object: 'model' }] }));
        return;
      }
      if (req.method !== 'POST') {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('');
        return;
      }
      const body = Buffer.concat(chunks);
      seen.push({ path: req.url ?? '', cacheSalt: (JSON.parse(body.toString('utf8')) as { cache_salt?: unknown }).cache_salt, sha256: createHash('sha256').update(body).digest('hex') });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"x","object":"chat.completion","choices":[]}');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

let dir: string;
let engine: Server;
let keyed: StartedRouter;
let open: StartedRouter;
const seen: Seen[] = [];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'switchyard-salt-'));
  const keys = join(dir, 'keys.yaml');
  writeFileSync(keys, `tenants:\n  team-a: {}\n  team-b: {}\nkeys:\n  - key: ${KEY_A}\n    tenant: team-a\n  - key: ${KEY_B}\n    tenant: team-b\n`);
  engine = await recordingEngine(seen);
  const backend = `http://127.0.0.1:${(engine.address() as AddressInfo).port}`;
  keyed = await startInProcessRouter(['--backend', backend, '--auth-api-keys-file', keys], 1);
  open = await startInProcessRouter(['--backend', backend], 1);
});
after(async () => {
  await keyed.router.close();
  await open.router.close();
  await new Promise((resolve) => engine.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

/** Sends `body` to `path` as the key's tenant and returns what the engine saw. */
async function through(router: StartedRouter, path: string, body: Record<string, unknown>, key?: string): Promise<Seen> {
  const before = seen.length;
  const answer = await postJson(`${router.base}${path}`, { model: MODEL, ...body }, key === undefined ? {} : { authorization: `Bearer ${key}` });
  assert.equal(answer.status, 200, answer.body.toString('utf8'));
  assert.equal(seen.length, before + 1);
  return seen[before] as Seen;
}

test('regression: two tenants reached the engine with the same (no) cache_salt, so one could time the other\'s cached prefixes', async () => {
  const chat = { messages: [{ role: 'user', content: 'the shared system prompt' }] };
  const a1 = await through(keyed, '/v1/chat/completions', chat, KEY_A);
  const a2 = await through(keyed, '/v1/chat/completions', chat, KEY_A);
  const b1 = await through(keyed, '/v1/chat/completions', chat, KEY_B);
  assert.equal(typeof a1.cacheSalt, 'string');
  assert.equal(a2.cacheSalt, a1.cacheSalt, 'one salt per tenant: its own requests still share its cache');
  assert.notEqual(b1.cacheSalt, a1.cacheSalt, 'another tenant, another salt');

  // A client's own salt partitions its tenant's cache further, and never reaches another tenant's partition.
  const aDoc = await through(keyed, '/v1/chat/completions', { ...chat, cache_salt: 'doc-1' }, KEY_A);
  const bDoc = await through(keyed, '/v1/chat/completions', { ...chat, cache_salt: 'doc-1' }, KEY_B);
  const bSpoof = await through(keyed, '/v1/chat/completions', { ...chat, cache_salt: a1.cacheSalt }, KEY_B);
  const salts = new Set([a1.cacheSalt, b1.cacheSalt, aDoc.cacheSalt, bDoc.cacheSalt, bSpoof.cacheSalt]);
  assert.equal(salts.size, 5, 'tenant B naming tenant A\'s salt as its own gets neither');

  // Completions too; other routes are forwarded byte for byte.
  const completion = await through(keyed, '/v1/completions', { prompt: 'the shared system prompt' }, KEY_A);
  assert.equal(completion.cacheSalt, a1.cacheSalt);
  const embeddingBody = { model: MODEL, input: 'text' };
  const embedding = await through(keyed, '/v1/embeddings', { input: 'text' }, KEY_A);
  assert.equal(embedding.cacheSalt, undefined);
  assert.equal(embedding.sha256, createHash('sha256').update(JSON.stringify(embeddingBody)).digest('hex'));
});

test('without API keys the body is forwarded byte for byte, cache_salt as the client sent it', async () => {
  const body = { model: MODEL, messages: [{ role: 'user', content: 'hi' }], cache_salt: 'mine' };
  const unkeyed = await through(open, '/v1/chat/completions', body);
  assert.equal(unkeyed.cacheSalt, 'mine');
  assert.equal(unkeyed.sha256, createHash('sha256').update(JSON.stringify(body)).digest('hex'));
});
