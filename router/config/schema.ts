/**
 * The one configuration schema of switchyard. Defaults, the config file,
 * `SWITCHYARD_*` environment variables and command-line flags are all read
 * through it (precedence: flags > env > file > defaults), and the same schema
 * generates `--help` and the configuration reference.
 *
 * Every field has a description (shown by `--help`) and a unit in its name or
 * description. Durations are milliseconds, sizes are bytes.
 *
 * Each top-level section lives in schema/ (one file a section); this file
 * assembles them with the top-level fields.
 */
import { z } from 'zod';
import { admission } from './schema/admission.ts';
import { auth } from './schema/auth.ts';
import { discovery } from './schema/discovery.ts';
import { hostPort } from './schema/fields.ts';
import { inferenceExtension } from './schema/inference-extension.ts';
import { lifecycle } from './schema/lifecycle.ts';
import { load } from './schema/load.ts';
import { modelsRefresh } from './schema/models-refresh.ts';
import { quotas } from './schema/quotas.ts';
import { redis } from './schema/redis.ts';
import { routing } from './schema/routing.ts';
import { scrape } from './schema/scrape.ts';
import { server } from './schema/server.ts';
import { sessions } from './schema/sessions.ts';
import { timeouts } from './schema/timeouts.ts';
import { tracing } from './schema/tracing.ts';
import { upstream } from './schema/upstream.ts';

export { POLICY_NAMES } from './schema/routing.ts';
export { OTLP_PROTOCOLS, TRACE_SAMPLERS, type OtlpProtocol, type TraceSamplerName } from './schema/tracing.ts';

const backendUrl = z
  .url({ protocol: /^https?$/ })
  .refine((value) => new URL(value).search === '' && new URL(value).hash === '', 'must have no query or fragment')
  // The OpenAI base_url habit: the router appends the request's own /v1/... path, so /v1/v1/... would 404.
  .refine(
    (value) => !/\/v1\/*$/.test(new URL(value).pathname),
    'must be the engine\'s address without /v1 (e.g. http://10.0.0.5:8000): the router forwards each request\'s own /v1/... path; a gateway prefix such as http://gw/engine-a is fine',
  );

/** `accessLog`: off, or the access log's line format (router/request/access-log.ts). */
export const ACCESS_LOG_FORMATS = ['off', 'json', 'text'] as const;
export type AccessLogFormat = (typeof ACCESS_LOG_FORMATS)[number];

/** The whole configuration schema. */
export const configSchema = z
  .strictObject({
    listen: hostPort.default('0.0.0.0:8080').describe('Traffic address HOST:PORT (inference routes).'),
    adminListen: hostPort.default('0.0.0.0:9090').describe('Admin address HOST:PORT (/metrics, probes, /debug); never shed.'),
    adminTokenFile: z
      .string()
      .min(1)
      .optional()
      .describe(
        'File holding a bearer token (one line, checked at start-up) that /metrics and /debug/* on the admin port then require; /livez and /readyz never do. Unset: the admin port is open to anyone who can reach it.',
      ),
    adminMaxConnections: z
      .number()
      .int()
      .min(1)
      .max(100_000)
      // Kubelet probes, a few Prometheus scrapers and an operator need a handful; reserved in the open-file budget.
      .default(64)
      .describe(
        'Open connections the admin port holds at most, reserved in the open-file budget before the traffic caps (lowered to an eighth of it when the limit is small). At the cap a new connection closes the oldest one with no request being answered, so probes still get through.',
      ),
    backends: z.array(backendUrl).default([]).describe('Static engine base URLs, e.g. http://10.0.0.5:8000 (flag: --backend, repeatable).'),
    kubeconfig: z
      .string()
      .min(1)
      .optional()
      .describe('Kubeconfig file(s) for the Kubernetes API when running outside the cluster (also read from KUBECONFIG); in-cluster credentials otherwise.'),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').describe('Log level.'),
    accessLog: z
      .enum(ACCESS_LOG_FORMATS)
      .default('off')
      .describe('One line per inference request on stdout once it is over (the process log is on stderr): off, json (for collectors) or text (for a terminal). It names the tenant, never the key, and never a body or prompt.'),
    requestIdHeader: z.string().min(1).default('x-request-id').describe('Header that carries the request id, accepted or generated.'),
    timeouts,
    server,
    lifecycle,
    upstream,
    routing,
    scrape,
    load,
    admission,
    modelsRefresh,
    discovery,
    redis,
    sessions,
    inferenceExtension,
    auth,
    quotas,
    tracing,
  })
  .superRefine((config, ctx) => {
    if (config.auth.apiKeysFile !== undefined && config.upstream.forwardClientAuthorization === true) {
      ctx.addIssue({ code: 'custom', path: ['auth', 'apiKeysFile'], message: "API-key authentication consumes the client's Authorization header; it cannot also be forwarded (upstream.forwardClientAuthorization)" });
    }
  });

/** Validated, frozen configuration. */
export type Config = z.infer<typeof configSchema>;
