/**
 * The one configuration schema of switchyard. Defaults, the config file,
 * `SWITCHYARD_*` environment variables and command-line flags are all read
 * through it (precedence: flags > env > file > defaults), and the same schema
 * generates `--help` and the configuration reference.
 *
 * Every field has a description (shown by `--help`) and a unit in its name or
 * description. Durations are milliseconds, sizes are bytes.
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { HOST_PORT_PATTERN, HOST_PORT_SHAPE_MESSAGE, PORT_RANGE_MESSAGE, portOutOfRange } from './host-port.ts';

const hostPort = z
  .string()
  .regex(HOST_PORT_PATTERN, HOST_PORT_SHAPE_MESSAGE)
  .refine((value) => !portOutOfRange(value), PORT_RANGE_MESSAGE);

const backendUrl = z
  .url({ protocol: /^https?$/ })
  .refine((value) => new URL(value).search === '' && new URL(value).hash === '', 'must have no query or fragment')
  // The OpenAI base_url habit: the router appends the request's own /v1/... path, so /v1/v1/... would 404.
  .refine(
    (value) => !/\/v1\/*$/.test(new URL(value).pathname),
    'must be the engine\'s address without /v1 (e.g. http://10.0.0.5:8000): the router forwards each request\'s own /v1/... path; a gateway prefix such as http://gw/engine-a is fine',
  );

const positiveMs = z.number().int().positive();

/** `accessLog`: off, or the access log's line format (router/request/access-log.ts). */
export const ACCESS_LOG_FORMATS = ['off', 'json', 'text'] as const;
export type AccessLogFormat = (typeof ACCESS_LOG_FORMATS)[number];

/** An IPv4 or IPv6 address, or a CIDR block of either. */
const ipOrCidr = z.string().refine((value) => {
  const slash = value.indexOf('/');
  const family = isIP(slash === -1 ? value : value.slice(0, slash));
  if (family === 0 || slash === -1) return family !== 0;
  const prefix = value.slice(slash + 1);
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}, 'must be an IPv4 or IPv6 address or CIDR block, e.g. 10.0.0.0/8 or fd00::/8');

const timeouts = z
  .strictObject({
    connectMs: positiveMs.default(5_000).describe('Upstream TCP connect timeout (ms).'),
    streamFirstByteMs: positiveMs
      .default(120_000)
      .describe('stream:true: max time from sending the request to the first response body byte (ms).'),
    streamChunkGapMs: positiveMs
      .default(120_000)
      .describe('stream:true: max gap between two response body chunks (ms); there is no total cap.'),
    responseMs: positiveMs
      .default(600_000)
      .describe('Non-streaming requests: budget for the whole upstream response (ms).'),
  })
  .prefault({})
  .describe('Upstream timeouts for every phase of a request.');

const server = z
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

const lifecycle = z
  .strictObject({
    preStopDelayMs: z
      .number()
      .int()
      .min(0)
      .default(10_000)
      .describe('After SIGTERM, keep serving this long with /readyz failing so endpoint removal propagates (ms).'),
    drainTimeoutMs: z
      .number()
      .int()
      .min(0)
      .default(15_000)
      .describe('After the pre-stop delay, max time to let in-flight requests finish before exit (ms).'),
    livenessStallMs: positiveMs
      .default(10_000)
      .describe('/livez fails once the main event loop has not run for this long (ms); probes are answered from a separate thread, so load never delays them.'),
  })
  .prefault({})
  .describe('Shutdown behaviour.');

const upstream = z
  .strictObject({
    apiKey: z
      .string()
      .min(1)
      .regex(/^[\x20-\x7e]+$/, 'must be printable ASCII on one line')
      .optional()
      .describe(
        'API key sent as "Authorization: Bearer" to the static backends and the discovery.mode source\'s endpoints, unless they set their own (discovery.static.apiKey, discovery.apiKey); never to discovery.sources entries. Never logged. Prefer apiKeyFile.',
      ),
    apiKeyFile: z
      .string()
      .min(1)
      .optional()
      .describe("File holding that API key alone on one line of printable ASCII (surrounding whitespace trimmed); checked at start-up, which fails otherwise. Wins over apiKey."),
    forwardClientAuthorization: z
      .boolean()
      .optional()
      .describe("Forward the client's Authorization header to endpoints whose source has no engine API key (a source's own key, or this section's for the static and discovery.mode sources, always replaces the client's header). Default: true, or false when auth.apiKeysFile is set (the header then authenticates the client to switchyard; setting both is a start-up error)."),
    retry: z.boolean().default(true).describe('Retry once on another endpoint when the connection fails before any response byte.'),
    retryBudgetRatio: z
      .number()
      .min(0)
      .max(1)
      .default(0.2)
      .describe('Retries in progress may be at most this share of open requests (a retry storm cannot double the load).'),
    retryBudgetMin: z.number().int().min(0).default(3).describe('Retries always allowed in progress at once, whatever the ratio.'),
    connectionsPerEndpoint: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        'Max open upstream connections per endpoint (default: the router-wide admission.maxInFlight). Every open request holds one, so an endpoint at this many counts as saturated: requests queue or shed visibly instead of waiting unseen for a connection.',
      ),
  })
  .prefault({})
  .describe('How the router talks to the engines.');

/** Preset scheduling profiles, selectable by name without defining them (router/scheduling/profiles/presets.ts). */
export const POLICY_NAMES = ['auto', 'least-load', 'session', 'round-robin', 'prefix-affinity'] as const;
const profileName = z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'profile names are lowercase words joined by dashes');

/** A plugin's own parameters; its registered schema checks them at config load (router/scheduling/profiles/registry.ts). */
const pluginParameters = z.record(z.string(), z.unknown()).describe("The plugin's own parameters, checked against its schema at load.");

const schedulingProfile = z
  .strictObject({
    affinity: z
      .array(
        z.union([
          z.string().min(1),
          z.strictObject({ name: z.string().min(1).describe('Affinity walk name.'), parameters: pluginParameters.optional() }),
        ]),
      )
      .default([])
      .describe(
        'Affinity walks tried in order before the picker, by name or as {name, parameters}: session (requests with a session key; parameters: epsilon, default routing.balanceEpsilon), prefix (keyless requests whose prompts share a prefix; parameters: epsilon, kappa, spread, minReuse, defaults from routing.prefix).',
      ),
    picker: z.enum(['weighted-max', 'round-robin']).default('weighted-max').describe('What decides when no affinity walk applies: the weighted maximum of the scorers, or round-robin.'),
    scorers: z
      .array(
        z.strictObject({
          name: z.string().min(1).describe('Scorer name: load-score (1 / (1 + outstanding work over capacity)) or kv-usage (free KV cache, 1 - usage).'),
          weight: z.number().min(0).describe("Weight of the scorer's rating (in [0, 1]) in the sum; 0 leaves it out."),
          parameters: pluginParameters.optional(),
        }),
      )
      .min(1)
      .optional()
      .describe('Scorers of the weighted maximum, e.g. [{"name": "load-score", "weight": 1}, {"name": "kv-usage", "weight": 0.2}]. Default: least-load\'s (load-score 1, kv-usage 0.001). Not with weights.'),
    weights: z
      .strictObject({
        load: z.number().min(0).default(1).describe('Weight of the load score (1 / (1 + outstanding work over capacity)).'),
        kvUsage: z.number().min(0).default(0.001).describe('Weight of free KV cache (1 - usage).'),
      })
      .optional()
      .describe('The older form of scorers: the weights of load-score and kv-usage. Not with scorers.'),
    powerOfTwoChoices: z.boolean().default(false).describe('Weighted maximum over two random candidates instead of all (for very large fleets).'),
  })
  .superRefine((profile, ctx) => {
    if (profile.scorers !== undefined && profile.weights !== undefined) ctx.addIssue({ code: 'custom', path: ['weights'], message: 'give scorers or weights, not both (weights is the older form of scorers)' });
  });

const prefix = z
  .strictObject({
    epsilon: z.number().min(0).default(0.5).describe('Load bound headroom over the mean load score before prefix affinity yields.'),
    kappa: z.number().min(0).default(2).describe('Extra headroom per unit of cache credit (a candidate holding 8k cached tokens of the prompt may run this much hotter).'),
    spread: z.number().min(1).default(2).describe("Engines per prefix group: about spread x fleet size x the group's traffic share, so one prompt shared by everyone cannot pile onto one engine."),
    minReuse: z.number().min(0).max(1).default(0.1).describe("Below this share of prompt tokens a cache could serve (the model's recent traffic), prefix affinity yields to least-load."),
    prefixBytes: z.number().int().min(1_024).max(64 * 1_024).default(64 * 1_024).describe('Bytes of canonical prompt read for prefix keys (bytes): the conversation key covers up to the first user message within it, block hashes the first 32 KiB.'),
    maxGroups: z.number().int().positive().default(4_096).describe('Prefix groups remembered per model (least recently seen evicted).'),
  })
  .prefault({})
  .describe('Prefix-cache affinity for requests without a session key (profiles with affinity `prefix`, e.g. the prefix-affinity preset).');

const routing = z
  .strictObject({
    policy: profileName
      .default('auto')
      .describe('Scheduling profile: a preset (auto: session affinity when the request has a session key, else least-load; least-load; session; round-robin; prefix-affinity: session key, else prompt-prefix affinity, else least-load) or a name from `profiles`.'),
    modelPolicies: z
      .record(z.string().min(1), profileName)
      .default({})
      .describe('Profile per model, overriding `policy` (config file only), e.g. {"llama-3": "least-load"}.'),
    profiles: z
      .record(profileName, schedulingProfile)
      .default({})
      .describe('Named scheduling profiles (config file only), e.g. {"chat": {"affinity": ["prefix"], "scorers": [{"name": "load-score", "weight": 1}, {"name": "kv-usage", "weight": 0.2}]}}.'),
    sessionHeader: z.string().min(1).default('x-session-id').describe('Request header that carries the session key.'),
    sessionFromUser: z.boolean().default(true).describe("Use the body's OpenAI `user` field as the session key when the header is absent."),
    balanceEpsilon: z
      .number()
      .min(0)
      .default(0.25)
      .describe('Session affinity bounded load: spill to the next endpoint when the chosen one is above (1 + epsilon) x the mean load score.'),
    powerOfTwoChoices: z
      .boolean()
      .default(false)
      .describe('Preset profiles: compare two random endpoints instead of all (for very large fleets).'),
    prefix,
    defaultModel: z
      .string()
      .min(1)
      .optional()
      .describe('Model for requests that name none (multipart audio); defaults to the only model when the fleet serves one.'),
  })
  .superRefine((routing, ctx) => {
    const known = (name: string) => (POLICY_NAMES as readonly string[]).includes(name) || Object.hasOwn(routing.profiles, name);
    for (const name of Object.keys(routing.profiles)) {
      if ((POLICY_NAMES as readonly string[]).includes(name)) ctx.addIssue({ code: 'custom', path: ['profiles', name], message: `${name} is a preset; name the profile differently` });
    }
    if (!known(routing.policy)) ctx.addIssue({ code: 'custom', path: ['policy'], message: `unknown profile ${routing.policy}: use a preset (${POLICY_NAMES.join(', ')}) or a name from routing.profiles` });
    for (const [model, name] of Object.entries(routing.modelPolicies)) {
      if (!known(name)) ctx.addIssue({ code: 'custom', path: ['modelPolicies', model], message: `unknown profile ${name}` });
    }
  })
  .prefault({})
  .describe('Request routing.');

const modelsRefresh = z
  .strictObject({
    intervalMs: positiveMs.default(30_000).describe("How often each endpoint's /v1/models is refreshed (ms)."),
    retryMs: positiveMs.default(2_000).describe('Retry interval while an endpoint\'s models are still unknown (ms).'),
    timeoutMs: positiveMs.default(5_000).describe('Timeout of one /v1/models request (ms).'),
  })
  .prefault({})
  .describe('Discovery of the models each endpoint serves.');

/**
 * Engine metric dialects (discovery/endpoint.ts `MetricsDialect`; config is a leaf and cannot
 * import it, and the composition root's hand-over of `scrape.dialects` fails to compile if the two drift).
 */
const metricsDialect = z.enum(['vllm', 'sglang', 'llamacpp', 'tgi', 'auto', 'none']);

const scrape = z
  .strictObject({
    intervalMs: z.number().int().min(100).default(1_000).describe("How often each engine's /metrics is scraped (ms, >= 100)."),
    timeoutMs: positiveMs.default(500).describe('Timeout of one scrape (ms).'),
    maxBytes: z.number().int().min(1_024).default(4 * 1024 * 1024).describe('Largest /metrics body read (bytes); larger fails the scrape.'),
    concurrency: z.number().int().positive().default(64).describe('Most scrapes in flight at once.'),
    maxAgeMs: positiveMs.optional().describe('A scrape older than this is stale and routing falls back to in-flight counts (ms; default 3 x intervalMs).'),
    dialect: metricsDialect
      .default('auto')
      .describe(
        "Whose metric names the engines serve: vllm, sglang, llamacpp, tgi; auto detects them from each scrape; none never scrapes (routing uses in-flight counts against the safe start's limit). A pod's switchyard.io/metrics-dialect annotation or label overrides it.",
      ),
    dialects: z
      .record(z.string().min(1), metricsDialect)
      .default({})
      .describe('Metric dialect per static backend URL (config file only), e.g. {"http://10.0.0.6:8080": "llamacpp"}.'),
  })
  .prefault({})
  .describe("Scraping the engines' Prometheus metrics.");

const load = z
  .strictObject({
    defaultCapacity: z
      .number()
      .int()
      .positive()
      .default(256)
      .describe("Capacity (max concurrent sequences) assumed when ranking an endpoint whose capacity is unknown; vLLM's default max-num-seqs."),
    capacity: z
      .record(z.string().min(1), z.number().int().positive())
      .default({})
      .describe('Known capacity per static backend URL (config file only), e.g. {"http://10.0.0.5:8000": 64}.'),
    ejection: z
      .strictObject({
        consecutiveFailures: z.number().int().positive().default(5).describe('Consecutive connect failures, resets, timeouts or 5xx that eject an endpoint.'),
        baseMs: positiveMs.default(10_000).describe('First ejection length (ms); doubles with each repeat.'),
        maxMs: positiveMs.default(300_000).describe('Longest ejection (ms).'),
        maxShare: z.number().min(0).max(1).default(0.5).describe('Most endpoints ejected at once, as a share of all (0-1).'),
      })
      .prefault({})
      .describe('Outlier ejection.'),
    replicas: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        "Router replicas sharing the engines, for what no Redis shares (with an HPA, its maxReplicas: a count above the true one admits less, never more). The safe start then takes 1/replicas of what a scrape shows an engine running without a queue, so a replica that joins a busy fleet starts at its share. The chart sets it to autoscaling.maxReplicas under an HPA. Counted replicas (replicasFromService) replace it once counted. Unset and not counted: each replica's safe start grows from its own requests only.",
      ),
    replicasFromService: z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'a Service name (DNS-1035 label)')
      .optional()
      .describe(
        "The router's own Service, in the router's namespace: its replicas are counted from the Service's EndpointSlices (every pod not terminating, starting ones included) and the count replaces load.replicas from the first list on, following each rollout and scale step (needs get/list/watch on endpointslices in that namespace; the chart sets it and grants exactly that). Unset: load.replicas.",
      ),
    safeStart: z
      .strictObject({
        enabled: z
          .boolean()
          .default(true)
          .describe('Limit the requests sent to an engine of unknown capacity until scrapes show what it takes, so a freshly started router does not flood small engines; configured capacity turns it off per endpoint.'),
        initialLimit: z
          .number()
          .int()
          .positive()
          .default(4)
          .describe('Requests one router replica may have open to an engine of unknown capacity at first; grows while the engine keeps up (requests; keep replicas x this near the smallest engine\'s max-num-seqs + admission.maxWaiting).'),
        ttfbTolerance: z
          .number()
          .gt(1)
          .default(2)
          .describe("A stream's time to first byte above this multiple of the engine's unloaded value (plus 50 ms) means the engine fell behind: the limit halves and stops growing (ratio, > 1)."),
      })
      .prefault({})
      .describe('Safe start for engines of unknown capacity (see docs/load-and-routing.md).'),
  })
  .prefault({})
  .describe('Load view.');

const admission = z
  .strictObject({
    maxWaiting: z
      .number()
      .min(0)
      .optional()
      .describe(
        "An endpoint is saturated when its estimated waiting requests reach this. Default: each engine's own allowance, bounded in time: what it drains while the router refills a freed slot (2 ms; 0 for engines draining under 500 requests a second, and until capacity and answer time are known; the router queue holds the rest).",
      ),
    kvCacheThreshold: z.number().min(0).max(1).default(0.9).describe('An endpoint is saturated when its KV-cache usage reaches this (0-1).'),
    maxInFlightPerEndpoint: z.number().int().min(0).default(0).describe('An endpoint is saturated when the router has this many requests open to it (0: off).'),
    queueLength: z
      .number()
      .int()
      .min(0)
      .default(10_000)
      .describe('Requests that may wait in the router when every candidate is saturated, highest priority first (0: shed at once with 429).'),
    queueMaxWaitMs: positiveMs
      .default(30_000)
      .describe(
        "Longest wait in the router queue (ms). A request is queued only while the queue ahead of it drains within this at the rate the model's engines finish requests; beyond it, 429 at once.",
      ),
    tenantQueueShare: z
      .number()
      .min(0)
      .max(1)
      .default(0.5)
      .describe(
        'Share of queueLength (0-1) one tenant (API key) may hold while another tenant waits; a tenant over it gets 429, and gives up its newest waiter to another tenant arriving at a full queue (1: no limit). Within a priority the queue serves tenants in turns. Without API keys every request is one tenant.',
      ),
    priorityHeader: z.string().min(1).default('x-priority').describe('Request header carrying the priority: high, normal (default) or low. Low is shed first.'),
    maxInFlight: z.number().int().positive().default(10_000).describe('Router-wide cap on open requests; over it, 429 with Connection: close.'),
    maxConnections: z.number().int().positive().default(20_000).describe('Router-wide cap on open client connections; over it, 429 with Connection: close.'),
    eventLoopLagMs: positiveMs.default(200).describe('Event-loop lag (ms) above which new requests are shed with 429.'),
  })
  .prefault({})
  .describe('Admission: saturation thresholds, the router queue, router-wide caps.');

const sourceKind = z.enum(['pods', 'endpointslices']);
const modelPattern = z
  .string()
  .min(1)
  .regex(/^[^*]*\*?$/, 'an exact model name, or a prefix ending in one * (e.g. team-b-*)');
/** Trust settings every source has: which models its endpoints may serve, and its engine key. */
const trustFields = {
  allowedModels: z
    .array(modelPattern)
    .min(1)
    .optional()
    .describe(
      'Models this source\'s endpoints may serve: exact names, or a prefix ending in * (e.g. team-b-*). Models an endpoint claims beyond these (label, annotation or /v1/models) are ignored and logged; an endpoint left with none is not routable. Default: any model.',
    ),
  apiKey: z
    .string()
    .min(1)
    .regex(/^[\x20-\x7e]+$/, 'must be printable ASCII on one line')
    .optional()
    .describe('Engine API key sent only to this source\'s endpoints as "Authorization: Bearer" (requests, scrapes, /v1/models), in place of the client\'s; never logged. Prefer apiKeyFile.'),
  apiKeyFile: z
    .string()
    .min(1)
    .optional()
    .describe("File holding this source's engine API key alone on one line of printable ASCII (surrounding whitespace trimmed); checked at start-up. Wins over apiKey."),
};
const sourceFields = {
  namespace: z.string().min(1).optional().describe("Namespace to watch; default: the router's own (service-account namespace file), or the kubeconfig context's."),
  labelSelector: z.string().min(1).optional().describe('pods: label selector of the inference pods, e.g. app=vllm (required for pods).'),
  service: z.string().min(1).optional().describe('endpointslices: name of the Service whose EndpointSlices list the engines (required for endpointslices).'),
  portName: z.string().min(1).default('http').describe('Name of the container port (pods) or Service port (endpointslices) that serves the OpenAI API.'),
  port: z.number().int().min(1).max(65_535).optional().describe('Engine port when neither the switchyard.io/port annotation nor the named port gives one; unset: the only declared port, else 8000 when none is declared.'),
  sliceManagers: z
    .array(z.string().min(1))
    .min(1)
    .default(['endpointslice-controller.k8s.io'])
    .describe(
      'endpointslices: accepted values of the endpointslice.kubernetes.io/managed-by label (["*"]: any, for Services without a selector whose slices another controller writes). A slice must also be controlled by the Service (ownerReference), when it names a controller.',
    ),
  ...trustFields,
};
/** Source names the router gives its own sources. */
const RESERVED_SOURCE_NAMES = ['default', 'static'];
const requireSelectorOrService = (value: { kind?: string; mode?: string; labelSelector?: string | undefined; service?: string | undefined }, ctx: z.RefinementCtx) => {
  const kind = value.kind ?? value.mode;
  if (kind === 'pods' && value.labelSelector === undefined) ctx.addIssue({ code: 'custom', path: ['labelSelector'], message: 'required when discovering pods' });
  if (kind === 'endpointslices' && value.service === undefined) ctx.addIssue({ code: 'custom', path: ['service'], message: 'required when discovering endpointslices' });
};

const discovery = z
  .strictObject({
    mode: z
      .enum(['static', 'pods', 'endpointslices'])
      .default('static')
      .describe('Kubernetes source set by flags/env: static (only `backends`), pods (label selector), endpointslices (a Service).'),
    ...sourceFields,
    sources: z
      .record(z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'source names are DNS labels'), z.strictObject({ kind: sourceKind, ...sourceFields }).superRefine(requireSelectorOrService))
      .superRefine((sources, ctx) => {
        // The router's own sources carry these names; sharing one would share its key and allow-list.
        for (const name of RESERVED_SOURCE_NAMES) if (name in sources) ctx.addIssue({ code: 'custom', path: [name], message: 'default and static are reserved source names' });
      })
      .default({})
      .describe(
        'More Kubernetes sources by name, run alongside `mode` (config file only), e.g. {"team-b": {"kind": "pods", "namespace": "b", "labelSelector": "app=vllm", "allowedModels": ["team-b-*"], "apiKeyFile": "/keys/team-b"}}. A source without apiKey/apiKeyFile gets no engine key (upstream.apiKey is not sent to it). A source in a namespace other than the router\'s own needs discovery.crossNamespace.',
      ),
    crossNamespace: z
      .boolean()
      .default(false)
      .describe(
        "Allow Kubernetes sources in namespaces other than the router's own (the `mode` source's namespace, else the service account's or kubeconfig context's). Off: such a source stops start-up, since a matching pod there would receive prompts. When on, give those sources allowedModels.",
      ),
    static: z
      .strictObject(trustFields)
      .prefault({})
      .describe('The static `backends` as a source: its model allow-list and engine key (default: upstream.apiKey/apiKeyFile).'),
    resyncIntervalMs: positiveMs.default(300_000).describe('Full re-list period that repairs anything a watch missed (ms; jittered by up to -10%).'),
    watchIdleTimeoutMs: positiveMs
      .default(150_000)
      .describe('A watch with no event and no bookmark for this long is restarted with a re-list (ms; the API server bookmarks about every 60 s).'),
    listTimeoutMs: positiveMs.default(30_000).describe('Timeout of one list request (ms).'),
    backoffInitialMs: positiveMs.default(1_000).describe('First retry delay after an API failure (ms); doubles per consecutive failure, jittered.'),
    backoffMaxMs: positiveMs.default(30_000).describe('Longest retry delay after API failures (ms).'),
    serviceAccountDir: z
      .string()
      .min(1)
      .default('/var/run/secrets/kubernetes.io/serviceaccount')
      .describe('In-cluster credentials: directory with the service account token, ca.crt and namespace.'),
  })
  .superRefine(requireSelectorOrService)
  .prefault({})
  .describe('Endpoint discovery (static backends and/or the Kubernetes API).');

/** A readable file path (secrets and certificates are mounted files, never values in the config). */
const filePath = z.string().min(1);

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

const redis = z
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

const sessions = z
  .strictObject({
    ttlMs: positiveMs.default(3_600_000).describe('With Redis: a session key\'s engine assignment is forgotten after this long without requests (ms, sliding).'),
    localCacheMs: z.number().int().min(0).max(60_000).default(1_000).describe('With Redis: how long a replica reuses an assignment it read before asking Redis again (ms).'),
    localCacheEntries: z.number().int().min(1_000).default(100_000).describe('With Redis: assignments each replica keeps in memory.'),
    localCacheBytes: z
      .number()
      .int()
      .min(1_048_576)
      .default(33_554_432)
      .describe('With Redis: estimated bytes of the assignments each replica keeps in memory (32 MiB; about 240 bytes an entry, keyed by the session\'s 43-character name whatever the key\'s length); the least recently used go first.'),
    keySecretFile: filePath
      .optional()
      .describe(
        "File holding this install's secret for naming sessions (one line, at least 32 characters; the same file on every replica): a session is named by HMAC-SHA256 of (tenant, model, session key), in Redis and in each replica's memory. Unset with Redis: a secret derived from redis.keyPrefix (placement stays consistent, but whoever knows the prefix can test guesses of session keys against Redis; a warning says so at start-up). The chart creates one.",
      ),
  })
  .prefault({})
  .describe('Sticky sessions shared through Redis: a session\'s first engine is stored and every replica follows it while that engine passes the scheduling filters. Without Redis, rendezvous hashing.');

const auth = z
  .strictObject({
    apiKeysFile: filePath
      .optional()
      .describe('File of API keys the traffic port then requires (YAML or JSON: keys with their tenant, tenants with their quotas; see docs/shared-state.md). Reloaded when it changes. Unset: no authentication.'),
    reloadIntervalMs: positiveMs.default(5_000).describe('How often apiKeysFile is checked for changes (ms).'),
    tenantCacheSalt: z
      .boolean()
      .default(true)
      .describe(
        "With apiKeysFile: set vLLM's cache_salt on /v1/chat/completions and /v1/completions bodies from the tenant (combined with the client's own cache_salt), so tenants never share prefix-cache blocks and one cannot time another's cached prefixes. The one change the router makes to a body: a member appended to the JSON object. Turn it off for engines that refuse the field.",
      ),
  })
  .prefault({})
  .describe('API-key authentication on the traffic port (/livez, /readyz and the admin port never need it).');

const quotas = z
  .strictObject({
    checkTimeoutMs: positiveMs.max(1_000).default(20).describe('Longest wait for the shared quota check (ms); past it the degraded (local) limit applies.'),
  })
  .prefault({})
  .describe('Per-tenant quotas (limits are in auth.apiKeysFile).');

/** `tracing.sampler`: the standard OpenTelemetry sampler names (OTEL_TRACES_SAMPLER). */
export const TRACE_SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;
export type TraceSamplerName = (typeof TRACE_SAMPLERS)[number];

/** `tracing.protocol`: the OTLP transports (OTEL_EXPORTER_OTLP_PROTOCOL). */
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json', 'grpc'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

const tracing = z
  .strictObject({
    enabled: z
      .boolean()
      .default(false)
      .describe('Export an OpenTelemetry span per inference request over OTLP and propagate W3C trace context to the engines under it. Off: no OpenTelemetry module is loaded and a client\'s traceparent passes through untouched.'),
    endpoint: z
      .url({ protocol: /^https?$/ })
      .optional()
      .describe('OTLP base URL of the collector; /v1/traces is appended for the HTTP protocols. Unset: http://localhost:4318 (HTTP) or http://localhost:4317 (gRPC).'),
    tracesEndpoint: z.url({ protocol: /^https?$/ }).optional().describe('OTLP traces URL used as is (no path appended); wins over tracing.endpoint.'),
    protocol: z.enum(OTLP_PROTOCOLS).default('http/protobuf').describe('OTLP transport.'),
    headersFile: z
      .string()
      .min(1)
      .optional()
      .describe('File of exporter headers (one `name=value` a line, or the comma-separated OTEL_EXPORTER_OTLP_HEADERS form), e.g. a collector\'s API key; read at start-up, never logged or shown.'),
    serviceName: z.string().min(1).max(256).default('switchyard').describe('service.name of the spans.'),
    sampler: z
      .enum(TRACE_SAMPLERS)
      .default('parentbased_traceidratio')
      .describe("Head sampler. parentbased_*: a request's incoming sampled flag decides, but only from server.trustedProxies; from any other client the ratio decides (a client cannot force tracing on or off)."),
    samplerArg: z.number().min(0).max(1).default(1).describe('Ratio of traces sampled by the traceidratio samplers (0-1); 0.01 suits a busy fleet.'),
    maxQueueSize: z.number().int().min(1).max(1_000_000).default(2_048).describe('Finished spans waiting for export at most; past it spans are dropped, never waited for (spans).'),
    maxExportBatchSize: z.number().int().min(1).max(100_000).default(512).describe('Spans per OTLP export at most (spans; at most maxQueueSize).'),
    scheduleDelayMs: positiveMs.default(5_000).describe('Time between exports of the waiting spans (ms).'),
    exportTimeoutMs: positiveMs.default(10_000).describe('Time one OTLP export may take (ms).'),
  })
  .refine((value) => value.maxExportBatchSize <= value.maxQueueSize, { path: ['maxExportBatchSize'], message: 'must be at most tracing.maxQueueSize' })
  .prefault({})
  .describe('OpenTelemetry tracing (standard OTEL_* variables are read too: see the reference).');

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
