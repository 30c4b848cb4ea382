/**
 * Turns a Pod object into an endpoint. Only the fields read here are
 * declared; the objects are the API server's JSON as received.
 *
 * A pod takes new requests only when it is Running, its Ready condition is
 * True, it has a pod IP and no deletionTimestamp. A pod with an IP that is
 * not (yet, or any more) ready is still listed, as not ready, so the model
 * probe can learn its models early and `/debug/endpoints` shows it; a pod
 * being deleted is listed as draining so its in-flight requests finish.
 */
import { METRICS_DIALECTS, type Endpoint, type MetricsDialect } from '../endpoint.ts';
import type { ObjectMeta } from './list-watcher.ts';

/** Pod annotations and labels switchyard reads. */
export const POD_KEYS = {
  /** Annotation: comma-separated model ids the pod serves (skips the /v1/models probe). */
  modelsAnnotation: 'switchyard.io/models',
  /** Label: the one model id the pod serves (label values cannot hold commas). */
  modelLabel: 'switchyard.io/model',
  /** Annotation: the engine's port, overriding the named container port. */
  portAnnotation: 'switchyard.io/port',
  /** Annotation: max concurrent sequences (vLLM --max-num-seqs), for load ranking. */
  capacityAnnotation: 'switchyard.io/capacity',
  /** Annotation or label: the engine's metric dialect (vllm, sglang, llamacpp, tgi, auto, none). */
  metricsDialect: 'switchyard.io/metrics-dialect',
} as const;

/** The parts of a Pod this module reads. */
export interface PodObject {
  readonly metadata?: ObjectMeta & {
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
    readonly deletionTimestamp?: string | null;
  };
  readonly spec?: {
    readonly containers?: readonly { readonly ports?: readonly { readonly name?: string; readonly containerPort?: number }[] }[];
  };
  readonly status?: {
    readonly phase?: string;
    readonly podIP?: string;
    readonly conditions?: readonly { readonly type?: string; readonly status?: string }[];
  };
}

/** How the engine port is found. */
export interface PodPortSettings {
  /** Name of the container port that serves the OpenAI API. */
  readonly portName: string;
  /** Port used when the pod has neither the annotation nor the named port (before the only-port and 8000 fallbacks). */
  readonly port?: number | undefined;
}

/** The endpoint of a pod, or why it has none. */
export type PodMapping = { readonly endpoint: Endpoint } | { readonly skipped: string };

/** Maps one pod; never throws. `id` is `namespace/name`. */
export function podEndpoint(id: string, pod: PodObject, settings: PodPortSettings): PodMapping {
  const skipped = skippedPod(pod);
  if (skipped !== undefined) return skipped;
  const port = podPort(pod, pod.metadata?.annotations ?? {}, settings);
  return typeof port === 'string' ? { skipped: port } : portEndpoint(id, pod, port);
}

/** The endpoints of a pod an InferencePool selects: one per target port, `namespace/name:port`; or why it has none. */
export function poolPodEndpoints(id: string, pod: PodObject, targetPorts: readonly number[]): PodMapping[] {
  const skipped = skippedPod(pod);
  if (skipped !== undefined) return [skipped];
  return targetPorts.map((port) => portEndpoint(`${id}:${port}`, pod, port));
}

/** Why a pod gives no endpoint whatever its port, or undefined. */
function skippedPod(pod: PodObject): { skipped: string } | undefined {
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return { skipped: `phase ${phase}` };
  const ip = pod.status?.podIP;
  if (ip === undefined || ip === '') return { skipped: 'no pod IP yet' };
  return undefined;
}

/** The endpoint of a pod on `port`; the pod has an IP and a live phase ({@link skippedPod} said nothing). */
function portEndpoint(id: string, pod: PodObject, port: number): { readonly endpoint: Endpoint } {
  const phase = pod.status?.phase;
  const ip = pod.status?.podIP as string;
  const annotations = pod.metadata?.annotations ?? {};
  const ready = phase === 'Running' && (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
  const deleting = pod.metadata?.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null;
  const capacity = positiveInt(annotations[POD_KEYS.capacityAnnotation]);
  const metricsDialect = dialectOf(annotations[POD_KEYS.metricsDialect] ?? pod.metadata?.labels?.[POD_KEYS.metricsDialect]);
  const endpoint: Endpoint = {
    id,
    url: `http://${ip.includes(':') ? `[${ip}]` : ip}:${port}`,
    models: podModels(pod.metadata?.labels ?? {}, annotations),
    labels: { ...(pod.metadata?.labels ?? {}) },
    ready: ready && !deleting,
    draining: deleting,
    ...(capacity === undefined ? {} : { capacity }),
    ...(metricsDialect === undefined ? {} : { metricsDialect }),
  };
  return { endpoint };
}

/** vLLM's port (`vllm serve` listens on 8000), used for a pod that declares no container port. */
export const VLLM_DEFAULT_PORT = 8000;

/**
 * The annotation; then the named container port; then `discovery.port` when set; then the pod's
 * only declared port; then vLLM's 8000 when it declares none (the stock vLLM and production-stack
 * manifests name their port otherwise or not at all). A string says why there is none.
 */
function podPort(pod: PodObject, annotations: Readonly<Record<string, string>>, settings: PodPortSettings): number | string {
  const annotated = annotations[POD_KEYS.portAnnotation];
  if (annotated !== undefined) {
    const port = positiveInt(annotated);
    return port !== undefined && port <= 65_535 ? port : `bad ${POD_KEYS.portAnnotation} annotation`;
  }
  const declared = (pod.spec?.containers ?? []).flatMap((container) => container.ports ?? []).filter((p) => typeof p.containerPort === 'number');
  const named = declared.find((p) => p.name === settings.portName);
  if (named?.containerPort !== undefined) return named.containerPort;
  if (settings.port !== undefined) return settings.port;
  if (declared.length === 1 && declared[0]?.containerPort !== undefined) return declared[0].containerPort;
  if (declared.length === 0) return VLLM_DEFAULT_PORT;
  return `several ports, none named ${settings.portName}: set discovery.port or the ${POD_KEYS.portAnnotation} annotation`;
}

/** Models from the annotation (comma-separated), else the label, else undefined (probe asks the pod). */
function podModels(labels: Readonly<Record<string, string>>, annotations: Readonly<Record<string, string>>): readonly string[] | undefined {
  const listed = annotations[POD_KEYS.modelsAnnotation] ?? labels[POD_KEYS.modelLabel];
  if (listed === undefined) return undefined;
  const models = [...new Set(listed.split(',').map((m) => m.trim()).filter((m) => m !== ''))].sort();
  return models.length === 0 ? undefined : models;
}

function positiveInt(raw: string | undefined): number | undefined {
  if (raw === undefined || !/^\d{1,9}$/.test(raw.trim())) return undefined;
  const value = Number(raw.trim());
  return value > 0 ? value : undefined;
}

/** A known dialect name, else undefined (an unknown value leaves the router's default in force). */
function dialectOf(value: string | undefined): MetricsDialect | undefined {
  return METRICS_DIALECTS.find((dialect) => dialect === value?.trim().toLowerCase());
}
