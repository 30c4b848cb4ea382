import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startRedisServer, type RedisServer } from '../../tests/kit/redis/redis-server.ts';
import { commandCalls, commandsBetween, flushRedis, infoField, readCommandCounts } from './shared-state-redis.ts';

const INFO = '# Stats\r\ntotal_connections_received:4\r\ntotal_commands_processed:1234\r\n# Commandstats\r\ncmdstat_evalsha:calls=10,usec=50,usec_per_call=5.00\r\ncmdstat_client|setname:calls=2,usec=1\r\ncmdstat_info:calls=3,usec=9\r\n';

describe('INFO parsing', () => {
  it('reads a numeric field and the calls per command', () => {
    assert.equal(infoField(INFO, 'total_commands_processed'), 1234);
    assert.equal(infoField(INFO, 'missing_field'), undefined);
    assert.deepEqual(commandCalls(INFO), { evalsha: 10, 'client|setname': 2, info: 3 });
  });

  it('leaves the reading\'s own INFO out of the difference', () => {
    const delta = commandsBetween({ total: 100, byCommand: { info: 1, get: 5 } }, { total: 111, byCommand: { info: 2, get: 15 } });
    assert.deepEqual(delta, { total: 10, byCommand: { get: 10 } });
  });
});

describe('readCommandCounts against a real redis-server', () => {
  let redis: RedisServer;
  before(async () => (redis = await startRedisServer()));
  after(async () => redis.stop());

  it('counts exactly the commands sent between two readings', async () => {
    const first = await readCommandCounts(redis.url);
    await flushRedis(redis.url);
    await flushRedis(redis.url);
    const delta = commandsBetween(first, await readCommandCounts(redis.url));
    assert.deepEqual(delta, { total: 2, byCommand: { flushall: 2 } });
  });
});
