/**
 * The Gateway API Inference Extension's `InferencePool`
 * (inference.networking.k8s.io/v1, sigs.k8s.io/gateway-api-inference-extension
 * v1.3.0), read as a discovery source reads it: which pods (a label selector
 * of `matchLabels` only), which of their ports (1-8 `targetPorts`, each a
 * separate endpoint), and which endpoint picker the pool names.
 *
 * The API server validates v1 objects against the CRD's schema, so a pool
 * this module sees is normally well formed. It still checks every field it
 * reads, because a CRD installed without its schema, or an older one, lets
 * anything through: a pool of the wrong shape is reported with why, never
 * routed to and never a crash.
 */

/** The group and version switchyard reads pools from. */
export const POOL_API = { group: 'inference.networking.k8s.io', version: 'v1', resource: 'inferencepools' } as const;
/** The older, separately defined pool CRD that switchyard does not read. */
export const OLD_POOL_API = { group: 'inference.networking.x-k8s.io', version: 'v1alpha2', resource: 'inferencepools' } as const;
/** Most target ports a pool has (the CRD's `maxItems`). */
export const MAX_TARGET_PORTS = 8;

/** The endpoint picker a pool names (`spec.endpointPickerRef`). */
export interface EndpointPickerRef {
  /** API group of the picker's object; empty for a core Service. */
  readonly group: string;
  /** Kind of the picker's object (default Service). */
  readonly kind: string;
  readonly name: string;
  readonly port: number | undefined;
  /** FailOpen or FailClose (default). */
  readonly failureMode: string;
}

/** What a well-formed pool says. */
export interface PoolSpec {
  /** `matchLabels` as a label selector (`app=vllm,tier=gpu`), keys sorted. */
  readonly selector: string;
  /** Ports of each selected pod, each its own endpoint; unique, in the pool's order. */
  readonly targetPorts: readonly number[];
  readonly endpointPicker: EndpointPickerRef | undefined;
}

/** A pool read from the API: its spec, or why it cannot be used. */
export type PoolReading = { readonly spec: PoolSpec } | { readonly problem: string };

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const LABEL_KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

/** Reads one InferencePool object; never throws. */
export function readPool(object: unknown): PoolReading {
  const spec = field(object, 'spec');
  if (!isRecord(spec)) return { problem: 'the pool has no spec' };
  const selector = poolSelector(spec['selector']);
  if (typeof selector !== 'string') return selector;
  const ports = targetPorts(spec['targetPorts']);
  if (!Array.isArray(ports)) return ports;
  return { spec: { selector, targetPorts: ports, endpointPicker: pickerRef(spec['endpointPickerRef']) } };
}

/** `spec.selector.matchLabels` as a selector string, or the problem with it. */
function poolSelector(selector: unknown): string | { problem: string } {
  if (!isRecord(selector)) return { problem: 'the pool has no selector: spec.selector.matchLabels must name the model-server pods' };
  const extra = Object.keys(selector).filter((key) => key !== 'matchLabels');
  // v1 selectors are matchLabels only; a matchExpressions the API let through would widen the pool if ignored.
  if (extra.length > 0) return { problem: `the pool's selector has ${extra.join(', ')}: InferencePool v1 selects by matchLabels only` };
  const labels = selector['matchLabels'];
  if (!isRecord(labels) || Object.keys(labels).length === 0) return { problem: 'the pool has no selector: spec.selector.matchLabels is empty, and an empty selector would select every pod' };
  const parts: string[] = [];
  for (const key of Object.keys(labels).sort()) {
    const value = labels[key];
    if (!LABEL_KEY.test(key) || typeof value !== 'string' || !LABEL_VALUE.test(value) || value.length > 63) return { problem: `the pool's selector label ${JSON.stringify(key)} is not a valid label key and value` };
    parts.push(`${key}=${value}`);
  }
  return parts.join(',');
}

/** `spec.targetPorts` as port numbers, or the problem with them. */
function targetPorts(raw: unknown): number[] | { problem: string } {
  if (!Array.isArray(raw) || raw.length === 0) return { problem: 'the pool has no targetPorts: name the port (1 to 8) the model servers listen on' };
  if (raw.length > MAX_TARGET_PORTS) return { problem: `the pool has ${raw.length} targetPorts; at most ${MAX_TARGET_PORTS}` };
  const ports: number[] = [];
  for (const entry of raw) {
    const port = field(entry, 'number');
    if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65_535) return { problem: 'a targetPorts entry has no valid number (1-65535)' };
    if (ports.includes(port)) return { problem: `targetPorts lists port ${port} twice` };
    ports.push(port);
  }
  return ports;
}

function pickerRef(raw: unknown): EndpointPickerRef | undefined {
  const name = field(raw, 'name');
  if (typeof name !== 'string' || name === '') return undefined;
  const text = (key: string, fallback: string) => {
    const value = field(raw, key);
    return typeof value === 'string' ? value : fallback;
  };
  const port = field(field(raw, 'port'), 'number');
  return { group: text('group', ''), kind: text('kind', 'Service'), name, port: typeof port === 'number' ? port : undefined, failureMode: text('failureMode', 'FailClose') };
}

/**
 * Whether `picker` is switchyard itself: a core Service named `ownService`.
 * Any other picker (the extension's endpoint picker, a vendor's) is reported,
 * and switchyard routes the pool's pods by its own rules rather than pretend
 * to apply that picker's.
 */
export function isOwnPicker(picker: EndpointPickerRef | undefined, ownService: string): boolean {
  return picker !== undefined && picker.group === '' && picker.kind === 'Service' && picker.name === ownService;
}

/** `picker` for logs and `/debug/endpoints`: `Service/name:port`. */
export function describePicker(picker: EndpointPickerRef): string {
  const kind = picker.group === '' ? picker.kind : `${picker.kind}.${picker.group}`;
  return `${kind}/${picker.name}${picker.port === undefined ? '' : `:${picker.port}`}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `value[key]` when `value` is a JSON object, else undefined: reading an object the API sent, whatever its shape. */
export function field(value: unknown, key: string): unknown {
  return isRecord(value) ? value[key] : undefined;
}
