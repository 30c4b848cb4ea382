/**
 * The access log: one line per inference request once it is over, on stdout (the process log
 * stays on stderr), off by default. `json` writes one JSON object a line for collectors; `text`
 * one readable line for a terminal. It names the tenant, never the key; the endpoint by its id,
 * never by a body, prompt or header; and the request id that the response, the engine and every
 * warning about the request carry too.
 */
import type { Writable } from 'node:stream';
import type { AccessLogFormat } from '../config/schema.ts';
import { untilBroken } from '../log.ts';
import type { RequestHook } from './request-hooks.ts';

/** What one request did, as the access log records it. Times in milliseconds. */
export interface AccessRecord {
  readonly requestId: string;
  /** The route (`/v1/chat/completions`), never the query. */
  readonly route: string;
  /** The requested model (a rewrite rule's target, when one applied), or `unknown` before the body was read. */
  readonly model: string;
  /** The model the client asked for, when a rewrite rule sent the request as {@link model}. */
  readonly requestedModel?: string | undefined;
  /** The rewrite rules that did (`namespace/name`, or `config/<name>`). */
  readonly rewrite?: string | undefined;
  /** The API key's tenant; absent without API keys or before authentication. */
  readonly tenant?: string | undefined;
  /** Id of the endpoint that answered last (a pod's `namespace/name`); absent when none was tried. */
  readonly endpoint?: string | undefined;
  /** Status the client got; 0 when it left before any. */
  readonly status: number;
  /** Why the router answered itself (its error code, e.g. `SWITCHYARD_OVERLOADED`), or why the client got nothing. */
  readonly reason?: string | undefined;
  /** Why the request was sent again to another endpoint (`connect`, `reset`). */
  readonly retry?: string | undefined;
  /** Time spent waiting for an endpoint (the router queue included). */
  readonly queueMs?: number | undefined;
  /** Time from arrival to the first response byte sent to the client. */
  readonly ttfbMs?: number | undefined;
  readonly durationMs: number;
  /** Response body bytes sent to the client. */
  readonly bytes: number;
}

/** Writes access records; a no-op when off. As a request hook, writes each request's record once it is over. */
export class AccessLog implements RequestHook {
  readonly enabled: boolean;
  readonly #format: AccessLogFormat;
  readonly #out: { write(line: string): void };

  /** Writes to `out` until a write fails (its reader went away): then drops the lines, as the process log does. */
  constructor(format: AccessLogFormat, out: Writable = process.stdout) {
    this.#format = format;
    this.enabled = format !== 'off';
    this.#out = untilBroken(out);
  }

  /** Writes one record (when on). */
  write(record: AccessRecord): void {
    if (!this.enabled) return;
    this.#out.write(this.#format === 'json' ? jsonLine(record) : textLine(record));
  }

  /** Records are built for it only when it is on. */
  wantsRecord(): boolean {
    return this.enabled;
  }

  /** The request is over: its line. */
  over(record: AccessRecord): void {
    this.write(record);
  }
}

const round = (ms: number | undefined) => (ms === undefined ? undefined : Math.round(ms * 10) / 10);

function jsonLine(record: AccessRecord): string {
  // Fixed key order, absent fields left out: one shape for every collector.
  return `${JSON.stringify({
    time: new Date().toISOString(),
    log: 'access',
    requestId: record.requestId,
    route: record.route,
    model: record.model,
    requestedModel: record.requestedModel,
    rewrite: record.rewrite,
    tenant: record.tenant,
    endpoint: record.endpoint,
    status: record.status,
    reason: record.reason,
    retry: record.retry,
    queueMs: round(record.queueMs),
    ttfbMs: round(record.ttfbMs),
    durationMs: round(record.durationMs),
    bytes: record.bytes,
  })}\n`;
}

/** A value as one token of a text line: quoted (JSON) when it holds a space, a quote or a control character, so no client-chosen model name can split or forge a line. */
function token(value: string): string {
  return /^[\x21\x23-\x7e]{1,200}$/.test(value) ? value : JSON.stringify(value.slice(0, 200));
}

function textLine(record: AccessRecord): string {
  const parts = [new Date().toISOString(), String(record.status), record.route, `model=${token(record.model)}`];
  if (record.requestedModel !== undefined) parts.push(`requested=${token(record.requestedModel)}`, `rewrite=${token(record.rewrite ?? '')}`);
  if (record.tenant !== undefined) parts.push(`tenant=${token(record.tenant)}`);
  if (record.endpoint !== undefined) parts.push(`endpoint=${token(record.endpoint)}`);
  if (record.reason !== undefined) parts.push(`reason=${record.reason}`);
  if (record.retry !== undefined) parts.push(`retry=${record.retry}`);
  if (record.queueMs !== undefined) parts.push(`queue=${round(record.queueMs)}ms`);
  if (record.ttfbMs !== undefined) parts.push(`ttfb=${round(record.ttfbMs)}ms`);
  parts.push(`dur=${round(record.durationMs)}ms`, `bytes=${record.bytes}`, `id=${record.requestId}`);
  return `${parts.join(' ')}\n`;
}
