/** The `redis` section: the optional shared state (connection, TLS, breaker, publishing). */
import { z } from 'zod';
import { filePath, hostPort, positiveMs } from './fields.ts';

const redisTls = z
  .strictObject({
    enabled: z.boolean().default(false).describe('Connect to Redis over TLS (also implied by a rediss:// url).'),
    caFile: filePath.optional().describe('PEM file of the CA that signed the Redis server certificate; default: the system CAs.'),
    certFile: filePath.optional().describe('PEM client certificate, for Redis servers that require mutual TLS.'),
    keyFile: filePath.optional().describe('PEM private key of certFile.'),
    serverName: z.string().min(1).optional().describe('Name to verify the server certificate against (SNI); default: the host.'),
  })
  .prefault({})
  .describe('TLS to Redis.');

export const redis = z
  .strictObject({
    url: z
      .string()
      .regex(/^rediss?:\/\/[^/@]+(\/\d+)?$/, 'must be redis://HOST:PORT[/DB] or rediss://HOST:PORT[/DB], with no credentials (use passwordFile)')
      .optional()
      .describe('Standalone Redis, e.g. redis://redis:6379/0. Unset (and no nodes): no shared state, every replica decides alone.'),
    mode: z.enum(['standalone', 'sentinel', 'cluster']).default('standalone').describe('standalone: url; sentinel: nodes are the Sentinels; cluster: nodes are Redis Cluster seed nodes.'),
    nodes: z.array(hostPort).default([]).describe('sentinel or cluster mode: HOST:PORT of the Sentinels or the cluster seed nodes.'),
    sentinelMasterName: z.string().min(1).default('mymaster').describe('sentinel mode: the monitored master name.'),
    username: z.string().min(1).optional().describe('Redis ACL user (with passwordFile); default: the default user.'),
    passwordFile: filePath.optional().describe('File holding the Redis password (one line).'),
    sentinelPasswordFile: filePath.optional().describe('sentinel mode: file holding the Sentinels\' own password, when they require one.'),
    tls: redisTls,
    keyPrefix: z
      .string()
      .regex(/^[A-Za-z0-9._:-]{1,64}$/, 'letters, digits and . _ : - only, at most 64')
      .default('switchyard:')
      .describe('Prefix of every key switchyard writes, so several routers can share one Redis (and an ACL can be limited to it: ~PREFIX*).'),
    commandTimeoutMs: positiveMs.max(1_000).default(50).describe('Longest wait for one Redis command (ms); a slower answer counts as a failure and the request goes on with local state.'),
    connectTimeoutMs: positiveMs.default(1_000).describe('Redis TCP connect timeout (ms); reconnects back off up to 1 s apart, forever.'),
    breakerFailures: z.number().int().min(1).default(3).describe('Consecutive failed commands that open the circuit breaker: Redis is then not asked at all for breakerOpenMs.'),
    breakerOpenMs: positiveMs.default(1_000).describe('How long the open breaker waits before one trial command (ms).'),
    publishIntervalMs: z.number().int().min(20).max(1_000).default(50).describe("How often each replica publishes its per-engine in-flight counts and reads the fleet's (ms)."),
    replicaTtlMs: z.number().int().min(200).default(2_000).describe("A replica's published counts expire this long after its last publish (ms), so a killed replica's counts vanish."),
  })
  .prefault({})
  .superRefine((redis, ctx) => {
    if (redis.mode === 'standalone' && redis.nodes.length > 0) ctx.addIssue({ code: 'custom', path: ['nodes'], message: 'nodes are for sentinel or cluster mode; standalone Redis takes url' });
    if (redis.mode !== 'standalone' && redis.nodes.length === 0) ctx.addIssue({ code: 'custom', path: ['nodes'], message: `${redis.mode} mode needs nodes` });
    if (redis.mode !== 'standalone' && redis.url !== undefined) ctx.addIssue({ code: 'custom', path: ['url'], message: `${redis.mode} mode takes nodes, not url` });
    if (redis.replicaTtlMs < 4 * redis.publishIntervalMs) ctx.addIssue({ code: 'custom', path: ['replicaTtlMs'], message: 'must be at least 4 x publishIntervalMs, or a live replica\'s counts expire between publishes' });
  })
  .describe('Shared state through Redis (optional): fleet-wide in-flight counts, sticky sessions, quotas. Redis improves decisions and never takes the router down: every command has a short timeout and a local fallback.');
