/**
 * Turns the EndpointSlices of one Service into endpoints. Only the fields
 * read here are declared; the objects are the API server's JSON as received.
 *
 * Conditions (discovery.k8s.io/v1 EndpointConditions):
 * - `terminating: true`: draining (no new requests, in-flight ones finish);
 * - otherwise ready when neither `ready` nor `serving` is false (the API says
 *   to read both as true when unset). `serving` matters on its own for a
 *   Service with `publishNotReadyAddresses`, whose slices say ready: true for
 *   pods that are not serving.
 * Models are never in a slice, so the model probe asks each endpoint.
 */
import type { Endpoint } from '../endpoint.ts';
import type { ObjectMeta } from './list-watcher.ts';
import type { PodPortSettings } from './pod-endpoint.ts';

/** The label that ties a slice to its Service. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/** The parts of an EndpointSlice this module reads. */
export interface EndpointSliceObject {
  readonly metadata?: ObjectMeta;
  readonly addressType?: string;
  readonly endpoints?: readonly {
    readonly addresses?: readonly string[];
    readonly conditions?: { readonly ready?: boolean | null; readonly serving?: boolean | null; readonly terminating?: boolean | null };
    readonly targetRef?: { readonly kind?: string; readonly name?: string; readonly namespace?: string };
    readonly zone?: string;
    readonly nodeName?: string;
  }[] | null;
  readonly ports?: readonly { readonly name?: string | null; readonly port?: number | null }[] | null;
}

/** Endpoints of all slices, and the slices or addresses that gave none. */
export interface SliceMapping {
  readonly endpoints: Endpoint[];
  readonly skipped: { readonly id: string; readonly reason: string }[];
}

/**
 * Maps every slice. Ids are `namespace/pod` from the target reference (stable
 * across slice reshuffles), else `namespace/address`. An endpoint present in
 * two slices at once (the controller moves endpoints between slices) is kept
 * once, preferring its ready copy.
 */
export function sliceEndpoints(slices: Iterable<EndpointSliceObject>, settings: PodPortSettings): SliceMapping {
  const byId = new Map<string, Endpoint>();
  const skipped: { id: string; reason: string }[] = [];
  for (const slice of slices) {
    const sliceId = `${slice.metadata?.namespace ?? ''}/${slice.metadata?.name ?? ''}`;
    if (slice.addressType !== 'IPv4' && slice.addressType !== 'IPv6') {
      skipped.push({ id: sliceId, reason: `addressType ${String(slice.addressType)}` });
      continue;
    }
    const port = slicePort(slice, settings);
    if (port === undefined) {
      skipped.push({ id: sliceId, reason: `no port named ${settings.portName} and no default port` });
      continue;
    }
    for (const entry of slice.endpoints ?? []) {
      const address = entry.addresses?.[0];
      if (address === undefined) continue;
      const namespace = entry.targetRef?.namespace ?? slice.metadata?.namespace ?? '';
      const id = entry.targetRef?.kind === 'Pod' && entry.targetRef.name ? `${namespace}/${entry.targetRef.name}` : `${namespace}/${address}`;
      const draining = entry.conditions?.terminating === true;
      const endpoint: Endpoint = {
        id,
        url: `http://${slice.addressType === 'IPv6' ? `[${address}]` : address}:${port}`,
        models: undefined,
        labels: {
          ...(entry.zone ? { 'topology.kubernetes.io/zone': entry.zone } : {}),
          ...(entry.nodeName ? { 'kubernetes.io/hostname': entry.nodeName } : {}),
        },
        ready: !draining && entry.conditions?.ready !== false && entry.conditions?.serving !== false,
        draining,
      };
      const prior = byId.get(id);
      if (prior === undefined || (!prior.ready && endpoint.ready)) byId.set(id, endpoint);
    }
  }
  return { endpoints: [...byId.values()], skipped };
}

/** The port named `portName`, else the slice's only port, else the configured default. */
function slicePort(slice: EndpointSliceObject, settings: PodPortSettings): number | undefined {
  const ports = slice.ports ?? [];
  const named = ports.find((p) => p.name === settings.portName && typeof p.port === 'number');
  if (named?.port) return named.port;
  if (ports.length === 1 && typeof ports[0]?.port === 'number') return ports[0].port;
  return settings.port;
}
