/** The `discovery` section: static backends and Kubernetes sources, with their trust settings. */
import { z } from 'zod';
import { positiveMs } from './fields.ts';

const sourceKind = z.enum(['pods', 'endpointslices', 'inferencepool']);
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
  pool: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'an InferencePool name (a DNS subdomain)')
    .max(253)
    .optional()
    .describe(
      'inferencepool: name of the InferencePool (inference.networking.k8s.io/v1) whose selector and targetPorts name the engines, each target port of a ready pod its own endpoint (required for inferencepool). Its InferenceObjectives and InferenceModelRewrites apply to requests.',
    ),
  models: z
    .array(z.string().min(1))
    .min(1)
    .optional()
    .describe('inferencepool: the models the pool serves, which binds them to it: its endpoints take these models\' requests without asking /v1/models. Unset: pod annotations, else /v1/models.'),
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
const requireSelectorOrService = (
  value: { kind?: string; mode?: string; labelSelector?: string | undefined; service?: string | undefined; pool?: string | undefined; models?: readonly string[] | undefined },
  ctx: z.RefinementCtx,
) => {
  const kind = value.kind ?? value.mode;
  if (kind === 'pods' && value.labelSelector === undefined) ctx.addIssue({ code: 'custom', path: ['labelSelector'], message: 'required when discovering pods' });
  if (kind === 'endpointslices' && value.service === undefined) ctx.addIssue({ code: 'custom', path: ['service'], message: 'required when discovering endpointslices' });
  if (kind === 'inferencepool' && value.pool === undefined) ctx.addIssue({ code: 'custom', path: ['pool'], message: 'required when discovering an inferencepool' });
  // Read by inferencepool sources only: anywhere else they would be silently ignored.
  for (const field of ['pool', 'models'] as const) {
    if (kind !== 'inferencepool' && value[field] !== undefined) ctx.addIssue({ code: 'custom', path: [field], message: 'only for an inferencepool source' });
  }
};

export const discovery = z
  .strictObject({
    mode: z
      .enum(['static', 'pods', 'endpointslices', 'inferencepool'])
      .default('static')
      .describe('Kubernetes source set by flags/env: static (only `backends`), pods (label selector), endpointslices (a Service), inferencepool (an InferencePool of the Gateway API Inference Extension).'),
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
    endpointPickerService: z
      .string()
      .min(1)
      .default('switchyard')
      .describe(
        "Name of switchyard's own Service as an InferencePool's endpointPickerRef would give it. A pool that names another picker is still routed, by switchyard's rules; /debug/endpoints and the log say which picker it names (the chart sets this to its Service).",
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
