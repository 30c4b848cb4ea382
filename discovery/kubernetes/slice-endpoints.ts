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
 *
 * Ownership: the list selects slices by the `kubernetes.io/service-name`
 * label, but anyone who may create EndpointSlices in the namespace can put
 * that label on a slice of their own and list any address in it. A slice
 * counts only when it is the Service's:
 * - its service-name label names the Service;
 * - its `endpointslice.kubernetes.io/managed-by` label is one of the accepted
 *   managers (default: the EndpointSlice controller only; `*` accepts any,
 *   for Services without a selector whose slices another controller writes);
 * - its controller ownerReference, when it has one, is the Service (`v1`
 *   `Service` of that name; the EndpointSlice controller always sets it, with
 *   the Service's uid) or, for slices the mirroring controller copies from a
 *   custom Endpoints object, the `v1` `Endpoints` of that name;
 * - a slice that says the EndpointSlice controller manages it must have the
 *   Service as its controller owner (the controller never writes one without).
 * The owner's uid is not compared with the Service's: that would need read
 * access to Services. Who may write EndpointSlices is RBAC's to limit.
 */
import type { Endpoint } from '../endpoint.ts';
import type { ObjectMeta } from './list-watcher.ts';
import { VLLM_DEFAULT_PORT, type PodPortSettings } from './pod-endpoint.ts';

/** The label that ties a slice to its Service. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
/** The label that names the controller writing a slice. */
export const MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';
/** `managed-by` value of the Kubernetes EndpointSlice controller (slices of Services with a selector). */
export const ENDPOINTSLICE_CONTROLLER = 'endpointslice-controller.k8s.io';
/** Accepted managers when a source names none. */
export const DEFAULT_SLICE_MANAGERS: readonly string[] = [ENDPOINTSLICE_CONTROLLER];

/** One ownerReference as the API returns it. */
interface OwnerReference {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly name?: string;
  readonly uid?: string;
  readonly controller?: boolean | null;
}

/** The parts of an EndpointSlice this module reads. */
export interface EndpointSliceObject {
  readonly metadata?: ObjectMeta & {
    readonly labels?: Readonly<Record<string, string>> | null;
    readonly ownerReferences?: readonly OwnerReference[] | null;
  };
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

/** Which Service's slices count (see the module comment). */
export interface SliceOwnership {
  /** Name of the Service. */
  readonly service: string;
  /** Accepted `managed-by` values; `*` accepts any (or none). Default {@link DEFAULT_SLICE_MANAGERS}. */
  readonly sliceManagers?: readonly string[] | undefined;
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
export function sliceEndpoints(slices: Iterable<EndpointSliceObject>, settings: PodPortSettings & SliceOwnership): SliceMapping {
  const byId = new Map<string, Endpoint>();
  const skipped: { id: string; reason: string }[] = [];
  for (const slice of slices) {
    const sliceId = `${slice.metadata?.namespace ?? ''}/${slice.metadata?.name ?? ''}`;
    const notOwned = ownershipProblem(slice, settings);
    if (notOwned !== undefined) {
      skipped.push({ id: sliceId, reason: notOwned });
      continue;
    }
    if (slice.addressType !== 'IPv4' && slice.addressType !== 'IPv6') {
      skipped.push({ id: sliceId, reason: `addressType ${String(slice.addressType)}` });
      continue;
    }
    const port = slicePort(slice, settings);
    if (port === undefined) {
      skipped.push({ id: sliceId, reason: `several ports, none named ${settings.portName}: set discovery.port` });
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

/** Why a slice is not the Service's, or undefined when it is. */
export function ownershipProblem(slice: EndpointSliceObject, ownership: SliceOwnership): string | undefined {
  const { service } = ownership;
  const labels = slice.metadata?.labels ?? {};
  if (labels[SERVICE_NAME_LABEL] !== service) return `${SERVICE_NAME_LABEL} label is not ${service}`;
  const managers = ownership.sliceManagers ?? DEFAULT_SLICE_MANAGERS;
  const manager = labels[MANAGED_BY_LABEL];
  if (!managers.includes('*') && (manager === undefined || !managers.includes(manager))) {
    return `managed by ${manager === undefined ? 'no one' : JSON.stringify(manager.slice(0, 100))}, not by ${managers.join(' or ')}`;
  }
  const owner = (slice.metadata?.ownerReferences ?? []).find((ref) => ref.controller === true);
  const ownedByService = owner?.apiVersion === 'v1' && owner.kind === 'Service' && owner.name === service;
  const mirrored = owner?.apiVersion === 'v1' && owner.kind === 'Endpoints' && owner.name === service;
  if (owner !== undefined && !ownedByService && !mirrored) return `controlled by ${String(owner.kind)} ${String(owner.name)}, not by Service ${service}`;
  if (manager === ENDPOINTSLICE_CONTROLLER && !ownedByService) return `says ${ENDPOINTSLICE_CONTROLLER} manages it but Service ${service} does not own it`;
  return undefined;
}

/** The port named `portName`, else the slice's only port, else `discovery.port`, else vLLM's 8000 when the slice lists none. */
function slicePort(slice: EndpointSliceObject, settings: PodPortSettings): number | undefined {
  const ports = (slice.ports ?? []).filter((p) => typeof p.port === 'number');
  const named = ports.find((p) => p.name === settings.portName);
  if (named?.port) return named.port;
  if (ports.length === 1 && ports[0]?.port) return ports[0].port;
  return settings.port ?? (ports.length === 0 ? VLLM_DEFAULT_PORT : undefined);
}
