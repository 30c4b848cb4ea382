/**
 * Reading the routers' own account of shared state from their admin
 * `/metrics`: whether Redis is up for each replica, how many replicas it
 * sees, how many sessions it moved. A series that is absent (the feature is
 * not there, or Redis is not configured) comes back undefined, never 0, so a
 * report cannot mistake a missing feature for a measured zero.
 */

/** One sample of an exposition: its labels and value. */
export interface Sample {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Every sample of the metric `name` (exact name: `_bucket`, `_sum` and the like are other names). */
export function samplesOf(text: string, name: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(name) || line.startsWith('#')) continue;
    const match = LINE.exec(line);
    if (match === null || match[1] !== name) continue;
    const labels: Record<string, string> = {};
    for (const label of (match[2] ?? '').matchAll(LABEL)) labels[label[1] as string] = (label[2] as string).replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    out.push({ labels, value: Number(match[3]) });
  }
  return out;
}

/** Sum of every sample of `name`; undefined when the exposition has none. */
export function sumOf(text: string, name: string): number | undefined {
  const samples = samplesOf(text, name);
  return samples.length === 0 ? undefined : samples.reduce((sum, s) => sum + s.value, 0);
}

/** Sum of `name` by the value of `label`; empty when the exposition has no sample. */
export function sumByLabel(text: string, name: string, label: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const sample of samplesOf(text, name)) {
    const key = sample.labels[label] ?? '';
    out[key] = (out[key] ?? 0) + sample.value;
  }
  return out;
}

/** A router's exposition; rejects when the admin port does not answer 200 within `timeoutMs`. */
export async function scrapeMetrics(adminUrl: string, timeoutMs = 2000): Promise<string> {
  const response = await fetch(`${adminUrl}/metrics`, { signal: AbortSignal.timeout(timeoutMs) });
  if (response.status !== 200) throw new Error(`${adminUrl}/metrics answered ${response.status}`);
  return response.text();
}

/** What one replica says about its shared state. */
export interface ReplicaView {
  /** `switchyard_shared_state_up`: 1, 0, or undefined when the series is absent (not configured, or not built). */
  readonly up: number | undefined;
  /** `switchyard_fleet_replicas`, undefined when absent. */
  readonly fleetReplicas: number | undefined;
  /** `switchyard_fleet_load_age_seconds`, undefined when absent. */
  readonly fleetLoadAgeS: number | undefined;
}

/** The shared-state gauges of one exposition. */
export function replicaView(text: string): ReplicaView {
  return { up: sumOf(text, 'switchyard_shared_state_up'), fleetReplicas: sumOf(text, 'switchyard_fleet_replicas'), fleetLoadAgeS: sumOf(text, 'switchyard_fleet_load_age_seconds') };
}

/**
 * True when every replica is up and sees the whole fleet: the state a
 * recovery converges to. A replica that exports no fleet gauge is judged on
 * `up` alone (fleet membership may not be built yet); one that exports no
 * `up` never agrees.
 */
export function fleetAgrees(views: readonly ReplicaView[], replicas: number): boolean {
  return views.length === replicas && views.every((v) => v.up === 1 && (v.fleetReplicas === undefined || v.fleetReplicas === replicas));
}
