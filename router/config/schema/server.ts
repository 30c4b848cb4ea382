/** The `server` section: limits of the client-facing HTTP server. */
import { isIP } from 'node:net';
import { z } from 'zod';
import { positiveMs } from './fields.ts';

/** An IPv4 or IPv6 address, or a CIDR block of either. */
const ipOrCidr = z.string().refine((value) => {
  const slash = value.indexOf('/');
  const family = isIP(slash === -1 ? value : value.slice(0, slash));
  if (family === 0 || slash === -1) return family !== 0;
  const prefix = value.slice(slash + 1);
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}, 'must be an IPv4 or IPv6 address or CIDR block, e.g. 10.0.0.0/8 or fd00::/8');

export const server = z
  .strictObject({
    headersTimeoutMs: positiveMs.default(30_000).describe('Max time for a client to send request headers (ms); stops slowloris.'),
    requestTimeoutMs: positiveMs
      .default(300_000)
      .describe('Max time for a client to send the whole request, body included (ms).'),
    keepAliveTimeoutMs: positiveMs
      .default(650_000)
      .describe('Idle keep-alive time for client connections (ms); above common load balancer idle timeouts (600 s).'),
    listenBacklog: z.number().int().min(1).default(4_096).describe('TCP listen backlog for the traffic port.'),
    maxHeaderBytes: z.number().int().min(1_024).default(16_384).describe('Max total size of request headers (bytes); larger gets 431.'),
    maxBodyBytes: z
      .number()
      .int()
      .min(1_024)
      .default(32 * 1024 * 1024)
      .describe('Max request body size (bytes); larger gets 413.'),
    maxJsonDepth: z.number().int().min(4).max(10_000).default(128).describe('Max nesting depth of a JSON request body; checked while the body arrives.'),
    minBodyBytesPerSecond: z
      .number()
      .int()
      .min(0)
      .default(1_024)
      .describe('Lowest average rate a request body may arrive at once bodyRateGraceMs has passed (bytes/s; 0: off); slower gets 408 and the connection closes.'),
    bodyRateGraceMs: positiveMs.default(5_000).describe('Time a request body may take before minBodyBytesPerSecond applies (ms).'),
    maxConnectionsPerClient: z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe('Open connections one client address may hold on the traffic port; requests on more get 429 and their connection closes (0: no limit; clients behind one proxy share an address).'),
    bodyBudgetBytes: z
      .number()
      .int()
      .min(1_024)
      // Bodies cost the process about twice this at peak (copies, and read buffers awaiting GC; see
      // `bench memory-limit`): 128 MiB keeps a 1 GiB container under its limit with the caps full.
      .default(128 * 1024 * 1024)
      .describe(
        'Router-wide cap on bytes held by buffered request bodies, queued and in flight (bytes); a body that does not fit gets 429 and its connection closes. Keep it well under the memory limit: at peak bodies cost the process about twice this.',
      ),
    endpointHeader: z
      .string()
      .regex(/^[A-Za-z0-9-]{1,64}$/, 'must be a header name, e.g. x-switchyard-endpoint')
      .optional()
      .describe(
        'Response header naming the endpoint that answered: a pod\'s namespace/name, static-N for the N-th static backend, never an address (unset: no header). For debugging which engine served a request; it tells clients your pod names.',
      ),
    trustedProxies: z
      .array(ipOrCidr)
      .default([])
      .describe(
        'Socket addresses of the proxies in front of the router (IPv4/IPv6 addresses or CIDR blocks, e.g. 10.0.0.0/8): only connections from these may set the priority header (admission.priorityHeader) and pass X-Forwarded-*, Forwarded and X-Real-IP on to the engines; from any other client the priority header is ignored and those headers are dropped, its X-Forwarded-For replaced by the socket address (to the chain of a trusted proxy it is appended). Empty: nobody.',
      ),
  })
  .prefault({})
  .describe('Client-facing HTTP server limits.');
