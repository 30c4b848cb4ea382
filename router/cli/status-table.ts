/**
 * Renders a router's `/debug/endpoints` document as the fleet table of `switchyard status`: one
 * row per endpoint with the one reason it is not routable (or `routable`), then the discovery
 * sources and the objects they skipped. Pure: the same document gives the same text.
 */

/** The parts of `/debug/endpoints` the table reads (the document is the router's JSON, as received). */
export interface DebugDocument {
  readonly synced?: boolean;
  readonly routerInFlight?: number;
  readonly endpoints?: readonly DebugEndpoint[];
  readonly discovery?: readonly DebugSource[];
}

/** One endpoint of `/debug/endpoints`. */
export interface DebugEndpoint {
  readonly id: string;
  readonly models: readonly string[] | null;
  readonly ready: boolean;
  readonly draining: boolean;
  readonly routable: boolean;
  readonly inFlight: number;
  /** Shared sessions the router holds on the endpoint; null without Redis. */
  readonly sessions?: number | null;
  readonly load?: { readonly safeStart?: { readonly phase?: string; readonly limit?: number } | null };
  readonly scrape?: { readonly metrics?: string; readonly ageMs?: number | null; readonly waiting?: number | null; readonly kvCacheUsage?: number | null; readonly lastError?: string | null };
  readonly health?: {
    readonly ejected?: boolean;
    readonly ejectedUntil?: string | null;
    readonly modelProbe?: { readonly error?: string | null } | null;
  };
}

/** One discovery source of `/debug/endpoints`. */
export interface DebugSource {
  readonly name: string;
  readonly kind: string;
  readonly namespace: string;
  readonly selector: string;
  readonly synced: boolean;
  readonly healthy: boolean;
  readonly endpoints: number;
  readonly error?: string | null;
  readonly skippedCount?: number;
  readonly skipped?: readonly { readonly id: string; readonly reason: string }[];
  /** InferencePool sources: the pool's state. */
  readonly pool?: { readonly pool: string; readonly problem: string | null; readonly endpointPicker: string | null; readonly endpointPickerIsSwitchyard: boolean };
}

/** Why an endpoint takes no requests, or `routable`: the first reason that holds, in the order routing checks them. */
export function endpointState(endpoint: DebugEndpoint, now: number): string {
  if (endpoint.draining) return 'draining';
  if (!endpoint.ready) return 'not ready';
  if (endpoint.models === null) {
    const probeError = endpoint.health?.modelProbe?.error;
    return probeError ? `models unknown: ${probeError}` : 'models unknown (probing)';
  }
  if (endpoint.models.length === 0) return 'no allowed model';
  if (endpoint.health?.ejected === true) {
    const until = Date.parse(endpoint.health.ejectedUntil ?? '');
    return Number.isFinite(until) ? `ejected (${Math.max(0, Math.ceil((until - now) / 1000))} s left)` : 'ejected';
  }
  return endpoint.routable ? 'routable' : 'not routable';
}

const dash = '-';
const percent = (value: number | null | undefined) => (value === null || value === undefined ? dash : `${Math.round(value * 100)}%`);
const count = (value: number | null | undefined) => (value === null || value === undefined ? dash : String(value));
const seconds = (ms: number | null | undefined) => (ms === null || ms === undefined ? dash : `${(ms / 1000).toFixed(1)} s`);

/** The table, sources and skipped objects as text lines; `now` is the reader's clock (ms). */
export function statusTable(document: DebugDocument, now: number): string[] {
  const header = ['ENDPOINT', 'MODELS', 'STATE', 'IN FLIGHT', 'WAITING', 'KV', 'SESSIONS', 'SAFE START', 'SCRAPE'];
  const rows = (document.endpoints ?? []).map((e) => [
    e.id,
    e.models === null ? dash : e.models.join(',') || dash,
    endpointState(e, now),
    String(e.inFlight),
    count(e.scrape?.waiting),
    percent(e.scrape?.kvCacheUsage),
    count(e.sessions),
    e.load?.safeStart ? `${e.load.safeStart.phase ?? '?'} ${e.load.safeStart.limit ?? ''}`.trim() : dash,
    e.scrape?.metrics === 'fresh' || e.scrape?.metrics === 'stale' ? `${e.scrape.metrics} ${seconds(e.scrape.ageMs)}` : (e.scrape?.metrics ?? dash),
  ]);
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: readonly string[]) => cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  const out = [line(header), ...rows.map(line)];
  const routable = rows.filter((row) => row[2] === 'routable').length;
  out.push('', `${rows.length} endpoint${rows.length === 1 ? '' : 's'}, ${routable} routable; router in flight ${document.routerInFlight ?? 0}; discovery ${document.synced === false ? 'not synced' : 'synced'}`);
  for (const source of document.discovery ?? []) {
    const health = source.healthy ? 'healthy' : `failing: ${source.error ?? 'not synced'}`;
    const skipped = source.skippedCount ?? source.skipped?.length ?? 0;
    out.push(`source ${source.name} (${source.kind} in ${source.namespace}, ${source.selector}): ${health}, ${source.endpoints} endpoint${source.endpoints === 1 ? '' : 's'}, ${skipped} skipped`);
    if (source.pool?.problem != null) out.push(`  InferencePool ${source.pool.pool}: ${source.pool.problem}`);
    else if (source.pool?.endpointPicker != null && !source.pool.endpointPickerIsSwitchyard) out.push(`  InferencePool ${source.pool.pool} names endpoint picker ${source.pool.endpointPicker}: switchyard routes it by its own rules`);
    for (const object of source.skipped ?? []) out.push(`  skipped ${object.id}: ${object.reason}`);
    if (skipped > (source.skipped?.length ?? 0)) out.push(`  (${skipped - (source.skipped?.length ?? 0)} more skipped: /debug/endpoints lists the first 20)`);
  }
  return out;
}
