/**
 * Who an endpoint is: the discovered endpoint as its source last described
 * it, the parts of its URL the HTTP client needs, the hash rendezvous
 * hashing reads, and whether it is still in the set. Parsing the URL and
 * hashing the id happen when the source describes the endpoint, never per
 * request.
 */
import type { Endpoint } from '../../discovery/endpoint.ts';
import { hashString } from './hash.ts';

/** One endpoint's identity; changed only by its source's descriptions and its departure. */
export class EndpointIdentity {
  #endpoint: Endpoint;
  #origin = '';
  #basePath = '';
  #idHash: number;
  #present = true;
  #version = 0;

  constructor(endpoint: Endpoint) {
    this.#endpoint = endpoint;
    this.#adoptUrl(endpoint.url);
    this.#idHash = hashString(endpoint.id);
  }

  /** The endpoint as its source last described it. */
  get endpoint(): Endpoint {
    return this.#endpoint;
  }

  /** `scheme://host:port` of the endpoint, for the HTTP client. */
  get origin(): string {
    return this.#origin;
  }

  /** Path prefix of the endpoint's base URL ('' for none), prepended to request paths. */
  get basePath(): string {
    return this.#basePath;
  }

  /** 32-bit hash of the id, for rendezvous hashing. */
  get idHash(): number {
    return this.#idHash;
  }

  /** False once the endpoint has left the endpoint set; never true again (a return gets a new state). */
  get present(): boolean {
    return this.#present;
  }

  /** Ready, not draining, present, and serves at least one known model (see EndpointView.routable). */
  get routable(): boolean {
    const e = this.#endpoint;
    return this.#present && e.ready && !e.draining && e.models !== undefined && e.models.length > 0;
  }

  /** Bumped by every description (the configured capacity may change), so derived values are recomputed. */
  get version(): number {
    return this.#version;
  }

  /** The source described the endpoint again (it stays in the set). */
  describe(endpoint: Endpoint): void {
    if (this.#endpoint.url !== endpoint.url) this.#adoptUrl(endpoint.url);
    if (this.#endpoint.id !== endpoint.id) this.#idHash = hashString(endpoint.id);
    this.#endpoint = endpoint;
    this.#version++;
  }

  /** The endpoint left the set. */
  depart(): void {
    this.#present = false;
  }

  #adoptUrl(href: string): void {
    const url = new URL(href);
    this.#origin = url.origin;
    this.#basePath = url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '');
  }
}
