/**
 * The Helm chart's values schema (charts/switchyard/values.schema.json),
 * generated: the chart's own keys are declared here in zod, and the `config:`
 * block is the router's one configuration schema (router/config/schema.ts)
 * turned into JSON Schema by zod, so the chart accepts exactly the options the
 * router reads. A test fails when the committed file differs from what this
 * generates (`npm run charts:generate` rewrites it).
 *
 * What the chart changes in the router's schema, and why:
 * - inline secrets are refused (`upstream.apiKey`, `discovery.apiKey`,
 *   `discovery.static.apiKey`, every source's `apiKey`): `config:` lands in a
 *   ConfigMap, readable by anyone who can read ConfigMaps. Keys come from
 *   Secrets mounted as files (`secrets.*`, which set the `*File` options);
 * - `listen` and `adminListen` are refused: the chart sets them from
 *   `containerPorts`, which its ports, probes and Service use;
 * - every object refuses unknown keys (as the router does);
 * - a pods source must name a labelSelector and an endpointslices source a
 *   service (the router's cross-field check, as if/then);
 * - a scheduling profile names registered plugins only, each with its own
 *   parameter schema (the router's registry check at load; plugin-schemas.ts).
 */
import { z } from 'zod';
import { configSchema } from '../../router/config/schema.ts';
import { withPluginSchemas } from './plugin-schemas.ts';

/** A JSON Schema node, as far as this module reads and edits it. */
export interface JsonSchema {
  [key: string]: unknown;
  type?: string | string[];
  description?: string;
  default?: unknown;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
  items?: JsonSchema;
  required?: string[];
}

/** Keys of `config` the chart sets itself, from other values. */
export const CHART_OWNED_CONFIG_KEYS = ['listen', 'adminListen'] as const;

const SECRET_REFUSED =
  'Refused by the chart: config is rendered into a ConfigMap. Put the key in a Secret and name it under secrets (upstreamApiKey, sourceApiKeys), which mounts it as a file and sets the matching apiKeyFile.';

const k8sObject = (what: string) => z.record(z.string(), z.unknown()).describe(what);
const k8sList = (what: string) => z.array(z.record(z.string(), z.unknown())).describe(what);
const port = z.number().int().min(1).max(65_535);
const secretRef = (what: string, key: string) =>
  z
    .object({
      existingSecret: z.string().describe('Name of an existing Secret in the release namespace; empty: not used.'),
      key: z.string().min(1).describe(`Key in that Secret (default ${key}).`),
    })
    .strict()
    .describe(what);
/** A {@link secretRef} the chart can also create itself (`create`), with a random value kept across upgrades. */
const generatedSecretRef = (what: string, key: string, create: string) =>
  z
    .object({
      existingSecret: z.string().describe('Name of an existing Secret in the release namespace; empty: the chart\'s own when create is set.'),
      key: z.string().min(1).describe(`Key in that Secret (default ${key}); the chart's own Secret uses ${key}.`),
      create: z.boolean().describe(create),
    })
    .strict()
    .describe(what);
const probe = (what: string) =>
  z
    .object({
      periodSeconds: z.number().int().min(1).describe('Seconds between probes.'),
      timeoutSeconds: z.number().int().min(1).describe('Seconds one probe may take.'),
      failureThreshold: z.number().int().min(1).describe('Failures in a row that count.'),
      successThreshold: z.number().int().min(1).optional().describe('Successes in a row that count (readiness only; 1 for the others).'),
      initialDelaySeconds: z.number().int().min(0).optional().describe('Seconds before the first probe.'),
    })
    .strict()
    .describe(what);
const monitorBase = {
  interval: z.string().regex(/^[0-9]+(ms|s|m|h)$/).describe('Scrape interval, e.g. 15s.'),
  scrapeTimeout: z.string().regex(/^[0-9]+(ms|s|m|h)$/).describe('Scrape timeout, below the interval.'),
  labels: z.record(z.string(), z.string()).describe('Extra labels, e.g. the `release` label your Prometheus selects monitors by.'),
};

/** The chart's own values; `config` is filled in from the router's schema. */
const chartValues = z
  .object({
    replicaCount: z.number().int().min(0).describe('Router replicas (ignored when autoscaling.enabled). A PodDisruptionBudget is rendered whenever more than one can run.'),
    replicaCountFromService: z
      .boolean()
      .describe(
        "Each replica counts the router's replicas from this chart's Service (config.load.replicasFromService), so that without Redis its share of an engine follows every rollout and scale step. Adds get/list/watch on endpointslices in the release namespace, mounts the service-account token and, with networkPolicy.enabled, needs networkPolicy.apiServer.cidrs, static discovery included. false: config.load.replicas (under an HPA, maxReplicas) or unknown.",
      ),
    image: z
      .object({
        repository: z.string().min(1).describe('Image repository (built by the root Dockerfile).'),
        tag: z.string().describe('Image tag; empty: the chart appVersion. `latest` is refused.'),
        digest: z.string().regex(/^(sha256:[a-f0-9]{64})?$/).describe('Image digest (sha256:...); when set the image is pulled by digest.'),
        pullPolicy: z.enum(['IfNotPresent', 'Always', 'Never']).describe('Image pull policy.'),
        node: z.string().min(1).describe('Path of the node binary inside the image.'),
        entrypoint: z.string().min(1).describe('Path of the switchyard CLI (router/cli/bin.ts) inside the image.'),
      })
      .strict()
      .describe('The router image.'),
    imagePullSecrets: k8sList('Image pull secrets (LocalObjectReference list).'),
    nameOverride: z.string().describe('Replaces the chart name in resource names.'),
    fullnameOverride: z.string().describe('Replaces the full resource name (release-chart), truncated to 63 characters.'),
    config: z.unknown(),
    secrets: z
      .object({
        upstreamApiKey: secretRef('Engine API key for the static backends and the discovery.mode source; sets config.upstream.apiKeyFile.', 'api-key'),
        adminToken: generatedSecretRef(
          'Admin-port bearer token for /metrics and /debug/*; sets config.adminTokenFile, and the ServiceMonitor/PodMonitor authenticate with it.',
          'token',
          'Without existingSecret: create <fullname>-admin-token with a random token once, kept across helm upgrade (lookup). Off by default.',
        ),
        sessionKey: generatedSecretRef(
          'The secret that names sessions (HMAC of tenant, model and session key); sets config.sessions.keySecretFile. Every replica must hold the same one.',
          'session-key',
          'Without existingSecret and with config.redis set: create <fullname>-session-key with a random secret once, kept across helm upgrade (lookup). helm template and GitOps cannot look it up: name an existingSecret there.',
        ),
        sourceApiKeys: z
          .record(
            z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/),
            z.object({ existingSecret: z.string().min(1), key: z.string().min(1) }).strict(),
          )
          .describe('Engine API key per discovery source: a name under config.discovery.sources, `default` (the discovery.mode source) or `static` (the static backends); sets that source\'s apiKeyFile.'),
        redisPassword: secretRef('Redis password; sets config.redis.passwordFile (needs config.redis). Read at start: restart the pods after changing it.', 'password'),
        redisSentinelPassword: secretRef('The Sentinels\' own password, when they require one; sets config.redis.sentinelPasswordFile.', 'password'),
        redisTls: z
          .object({
            existingSecret: z.string().describe('Name of an existing Secret in the release namespace; empty: not used.'),
            caKey: z.string().describe('Key of the PEM CA that signed the Redis certificate (default ca.crt); sets config.redis.tls.caFile. Empty: the system CAs.'),
            certKey: z.string().describe('Key of the PEM client certificate, for mutual TLS (e.g. tls.crt); sets config.redis.tls.certFile. Empty: none.'),
            keyKey: z.string().describe('Key of that certificate\'s PEM private key (e.g. tls.key), with certKey; sets config.redis.tls.keyFile.'),
          })
          .strict()
          .describe('TLS to Redis from one Secret, mounted as files; sets config.redis.tls.enabled and the files named.'),
        apiKeys: secretRef(
          'API keys the traffic port then requires; sets config.auth.apiKeysFile. Mounted as a directory (no subPath), so a change of the Secret reaches the router, which reloads the file, without a restart.',
          'api-keys.yaml',
        ),
        tracingHeaders: secretRef('Headers of the OTLP trace exporter (a collector API key), one line name=value[,name=value]; sets config.tracing.headersFile.', 'headers'),
      })
      .strict()
      .describe('Secrets mounted read-only as files; the chart renders no secret value of yours (it creates only random ones: sessionKey, adminToken with create).'),
    listenAddress: z.string().min(1).describe('Address the router binds both ports on; "[::]" for IPv6-only clusters.'),
    containerPorts: z
      .object({
        http: port.describe('Traffic port (inference routes); sets config.listen.'),
        admin: port.describe('Admin port (/livez, /readyz, /metrics, /debug); sets config.adminListen.'),
      })
      .strict()
      .describe('Container ports, named http and admin.'),
    heapMaxOldSpaceMiB: z
      .number()
      .int()
      .min(64)
      .describe('Node old-space heap cap (MiB, --max-old-space-size); keep it well under the memory limit (384 is what the memory-limit benchmark proves in 1 GiB).'),
    resources: z
      .object({ requests: k8sObject('Requests (cpu, memory).'), limits: k8sObject('Limits; keep the memory limit above the request.') })
      .strict()
      .describe('Container resources.'),
    terminationGraceMarginSeconds: z
      .number()
      .int()
      .min(0)
      .describe('Added to config.lifecycle.preStopDelayMs + drainTimeoutMs (rounded up to seconds) to give terminationGracePeriodSeconds.'),
    probes: z
      .object({
        startup: probe('Startup probe on /livez (admin port).'),
        liveness: probe('Liveness probe on /livez (admin port).'),
        readiness: probe('Readiness probe on /readyz (admin port).'),
      })
      .strict()
      .describe('Probe timings; paths and port are fixed.'),
    updateStrategy: k8sObject('Deployment strategy; maxUnavailable 0 keeps capacity during a rollout.'),
    podDisruptionBudget: z
      .object({
        enabled: z.boolean().describe('Render a PodDisruptionBudget when more than one replica can run.'),
        maxUnavailable: z.union([z.number().int().min(0), z.string().regex(/^[0-9]+%$/)]).describe('Pods that may be disrupted at once.'),
      })
      .strict()
      .describe('PodDisruptionBudget.'),
    topologySpread: z
      .object({
        enabled: z.boolean().describe('Render soft (ScheduleAnyway) spread constraints over topologyKeys.'),
        maxSkew: z.number().int().min(1).describe('maxSkew of each constraint.'),
        topologyKeys: z.array(z.string().min(1)).describe('Node labels to spread over.'),
      })
      .strict()
      .describe('Generated topology spread.'),
    topologySpreadConstraints: k8sList('Replaces the generated spread constraints when not empty.'),
    autoscaling: z
      .object({
        enabled: z.boolean().describe('HorizontalPodAutoscaler (autoscaling/v2) on CPU; replicaCount is then ignored.'),
        minReplicas: z.number().int().min(1).describe('Fewest replicas.'),
        maxReplicas: z.number().int().min(1).describe('Most replicas.'),
        targetCPUUtilizationPercentage: z.number().int().min(1).max(100).describe('Average CPU utilisation to aim for (% of the request).'),
        behavior: k8sObject('HPA scaling behavior, passed through.'),
      })
      .strict()
      .describe('Autoscaling.'),
    serviceAccount: z
      .object({
        create: z.boolean().describe('Create the ServiceAccount (else `name` must exist).'),
        name: z.string().describe('Name; empty: the full name.'),
        annotations: z.record(z.string(), z.string()).describe('Annotations.'),
      })
      .strict()
      .describe('The router identity.'),
    rbac: z
      .object({ create: z.boolean().describe('A Role and RoleBinding (get/list/watch on pods or endpointslices; for an inferencepool, on its pool, pods, objectives and rewrites) in each namespace discovery watches.') })
      .strict()
      .describe('Discovery RBAC.'),
    podSecurityContext: k8sObject('Pod securityContext (restricted Pod Security by default).'),
    securityContext: k8sObject('Container securityContext (restricted Pod Security by default).'),
    service: z
      .object({
        type: z.enum(['ClusterIP', 'NodePort', 'LoadBalancer']).describe('Type of the traffic Service (the admin Service is always ClusterIP).'),
        ports: z
          .object({ http: port.describe('Traffic port, on the traffic Service (<fullname>).'), admin: port.describe('Admin port, on the admin Service (<fullname>-admin).') })
          .strict()
          .describe('Service ports.'),
        annotations: z.record(z.string(), z.string()).describe('Annotations of the traffic Service.'),
        adminAnnotations: z.record(z.string(), z.string()).describe('Annotations of the admin Service.'),
      })
      .strict()
      .describe('The Services in front of the replicas: traffic, and admin apart from it.'),
    ingress: z
      .object({
        enabled: z.boolean().describe('An Ingress (networking.k8s.io/v1) to the traffic Service; the admin port is never exposed.'),
        className: z.string().describe('IngressClass name; empty: the cluster default.'),
        annotations: z.record(z.string(), z.string()).describe('Annotations (raise the controller read timeout for long streams).'),
        hosts: z
          .array(
            z
              .object({
                host: z.string().min(1).describe('Host name.'),
                paths: z
                  .array(z.object({ path: z.string().startsWith('/').describe('Path.'), pathType: z.enum(['Prefix', 'Exact', 'ImplementationSpecific']).describe('Path type.') }).strict())
                  .optional()
                  .describe('Paths; absent or empty: / (Prefix).'),
              })
              .strict(),
          )
          .describe('Hosts and their paths; empty: every host, path /.'),
        tls: k8sList('IngressTLS list.'),
      })
      .strict()
      .describe('Ingress to the traffic port.'),
    httpRoute: z
      .object({
        enabled: z.boolean().describe('A Gateway API HTTPRoute (gateway.networking.k8s.io/v1) to the traffic Service.'),
        annotations: z.record(z.string(), z.string()).describe('Annotations.'),
        parentRefs: k8sList('ParentReference list: the Gateways to attach to (required when enabled).'),
        hostnames: z.array(z.string().min(1)).describe('Hostnames; empty: those of the listeners.'),
        matches: k8sList('HTTPRouteMatch list of the one rule; empty: every request.'),
        timeouts: k8sObject('HTTPRouteTimeouts of the rule (e.g. request: 3600s for long streams); empty: the implementation default.'),
      })
      .strict()
      .describe('Gateway API HTTPRoute to the traffic port.'),
    networkPolicy: z
      .object({
        enabled: z.boolean().describe('Ingress only to the traffic and admin ports; egress only to DNS, the API server and the engines.'),
        trafficFrom: k8sList('Peers allowed to the traffic port (NetworkPolicyPeer list); empty: anyone.'),
        adminFrom: k8sList('Peers allowed to the admin port (NetworkPolicyPeer list); empty: nobody (kubelet probes come from the node, which most CNIs always allow).'),
        dns: z
          .object({ namespace: z.string().min(1).describe('Namespace of the cluster DNS.'), podLabels: z.record(z.string(), z.string()).describe('Labels of the DNS pods.') })
          .strict()
          .describe('Cluster DNS.'),
        apiServer: z
          .object({
            cidrs: z
              .array(z.string().min(1))
              .describe(
                "CIDRs of the API server endpoints (/32 each); required when discovery reads the API (rendering fails without them): `kubectl get endpointslices -n default kubernetes -o jsonpath='{.items[*].endpoints[*].addresses[*]}'`.",
              ),
            ports: z.array(port).describe('API server ports.'),
          })
          .strict()
          .describe('The kube-apiserver (only when discovery reads the API).'),
        engines: k8sList('Egress rules to the engines (NetworkPolicyEgressRule list); empty: derived from config (watched namespaces, plain label selectors, static backends given by IP).'),
        redisTo: k8sList(
          'Peers the router may reach Redis at (NetworkPolicyPeer list), on the ports of config.redis.url or nodes (in sentinel mode also 6379, for the master the Sentinels name); empty: derived from the hosts (a namespaceSelector for NAME.NAMESPACE.svc, an ipBlock for an IPv4 address; rendering fails for any other host). Never any address.',
        ),
        redis: k8sList('Egress rules to Redis (NetworkPolicyEgressRule list) that replace the derived one; each needs `to`.'),
        extraEgress: k8sList('More egress rules, appended.'),
      })
      .strict()
      .describe('NetworkPolicy.'),
    metrics: z
      .object({
        serviceMonitor: z
          .object({
            enabled: z.boolean().describe('A ServiceMonitor for the admin port /metrics (prometheus-operator).'),
            ...monitorBase,
            relabelings: k8sList('Relabelings.'),
            metricRelabelings: k8sList('Metric relabelings.'),
          })
          .strict()
          .describe('ServiceMonitor.'),
        podMonitor: z
          .object({ enabled: z.boolean().describe('A PodMonitor for the admin port /metrics.'), ...monitorBase })
          .strict()
          .describe('PodMonitor.'),
      })
      .strict()
      .describe('Prometheus scraping.'),
    prometheusRule: z
      .object({
        enabled: z.boolean().describe('The alert rules (alerts/switchyard-rules.yaml) as a PrometheusRule.'),
        labels: z.record(z.string(), z.string()).describe('Extra labels, e.g. the one your Prometheus selects rules by.'),
      })
      .strict()
      .describe('PrometheusRule.'),
    dashboards: z
      .object({
        enabled: z.boolean().describe('One ConfigMap per dashboard (dashboards/*.json) for the Grafana sidecar.'),
        namespace: z.string().describe('Namespace of the ConfigMaps; empty: the release namespace.'),
        label: z.string().min(1).describe('Label the sidecar selects.'),
        labelValue: z.string().describe('Its value.'),
        annotations: z.record(z.string(), z.string()).describe('Annotations, e.g. grafana_folder.'),
      })
      .strict()
      .describe('Grafana dashboards.'),
    configCheck: z
      .object({
        enabled: z.boolean().describe('Run `switchyard check-config` as an init container before the router: a bad configuration stops the pod at Init with one line naming the key; its log shows the effective configuration, secrets redacted.'),
        resources: k8sObject('Resources of the check-config init container.'),
      })
      .strict()
      .describe('The config-check init container.'),
    tests: z
      .object({
        requireModels: z.boolean().describe('helm test: /v1/models must list a model.'),
        timeoutMs: z.number().int().min(1).describe('helm test: budget per GET (ms).'),
      })
      .strict()
      .describe('The helm test Pod (switchyard check).'),
    extraEnv: k8sList('Extra environment variables (EnvVar list), e.g. SWITCHYARD_LOG_LEVEL.'),
    extraArgs: z.array(z.string()).describe('Extra arguments after `serve --config FILE` (flags win over the file).'),
    extraVolumes: k8sList('Extra volumes.'),
    extraVolumeMounts: k8sList('Extra volume mounts of the router container.'),
    podAnnotations: z.record(z.string(), z.string()).describe('Pod annotations.'),
    podLabels: z.record(z.string(), z.string()).describe('Pod labels.'),
    nodeSelector: z.record(z.string(), z.string()).describe('Node selector.'),
    tolerations: k8sList('Tolerations.'),
    affinity: k8sObject('Affinity.'),
    priorityClassName: z.string().describe('Priority class.'),
  })
  .strict();

/** Walks every schema node (objects, records, arrays, combinators). */
function walk(node: JsonSchema, visit: (node: JsonSchema, path: string[]) => void, path: string[] = []): void {
  visit(node, path);
  for (const [key, child] of Object.entries(node.properties ?? {})) walk(child, visit, [...path, key]);
  if (typeof node.additionalProperties === 'object') walk(node.additionalProperties, visit, [...path, '*']);
  if (node.items !== undefined) walk(node.items, visit, [...path, '[]']);
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) for (const child of (node[key] as JsonSchema[] | undefined) ?? []) walk(child, visit, path);
}

/** Requires `field` when `discriminator` is `value` (the router's cross-field check). */
function requireWhen(discriminator: string, value: string, field: string): JsonSchema {
  return { if: { properties: { [discriminator]: { const: value } }, required: [discriminator] }, then: { required: [field] } };
}

/** The `config` part: the router's schema with the chart's changes (see the header). */
export function chartConfigSchema(): JsonSchema {
  const schema = z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  delete schema['$schema'];
  for (const key of CHART_OWNED_CONFIG_KEYS) delete schema.properties?.[key];
  walk(schema, (node) => {
    if (node.properties !== undefined && node.additionalProperties === undefined) node.additionalProperties = false;
    if (node.properties?.['apiKey'] !== undefined) node.properties['apiKey'] = { not: {}, description: SECRET_REFUSED };
  });
  const routing = schema.properties?.['routing'] as JsonSchema;
  withPluginSchemas((routing.properties?.['profiles'] as JsonSchema).additionalProperties as JsonSchema);
  const discovery = schema.properties?.['discovery'] as JsonSchema;
  discovery['allOf'] = [requireWhen('mode', 'pods', 'labelSelector'), requireWhen('mode', 'endpointslices', 'service'), requireWhen('mode', 'inferencepool', 'pool')];
  const source = (discovery.properties?.['sources'] as JsonSchema).additionalProperties as JsonSchema;
  source['allOf'] = [requireWhen('kind', 'pods', 'labelSelector'), requireWhen('kind', 'endpointslices', 'service'), requireWhen('kind', 'inferencepool', 'pool')];
  schema.description =
    'The router configuration (docs/configuration.md), rendered into a ConfigMap and read with --config. listen and adminListen are set from containerPorts; inline API keys are refused (use secrets).';
  return schema;
}

/** The whole values schema, as committed in charts/switchyard/values.schema.json. */
export function valuesSchema(): JsonSchema {
  const schema = z.toJSONSchema(chartValues, { io: 'input' }) as JsonSchema;
  const properties = schema.properties as Record<string, JsonSchema>;
  properties['config'] = chartConfigSchema();
  const image = properties['image'] as JsonSchema;
  (image.properties as Record<string, JsonSchema>)['tag'] = { ...image.properties?.['tag'], not: { const: 'latest' } };
  return { $schema: schema['$schema'], title: 'switchyard Helm chart values', ...schema };
}

/** The file's text: stable key order, two-space indent, final newline. */
export function renderValuesSchema(): string {
  return `${JSON.stringify(valuesSchema(), null, 2)}\n`;
}
