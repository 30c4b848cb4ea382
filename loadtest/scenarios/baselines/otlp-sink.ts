/**
 * A trace collector's receiving end for benchmarks: accepts OTLP/HTTP
 * exports (protobuf or JSON), counts the bytes and answers 200, so a router
 * with tracing on does all its own work (spans, batching, encoding, the
 * POST) without a collector's CPU on the cores being measured. The
 * correctness of what is exported is the tracing suite's (a real Jaeger).
 */
import { createServer } from 'node:http';
import { listenOn } from '../../sim/node-http.ts';

/** A running sink. */
export interface OtlpSink {
  /** Base URL for `--tracing-endpoint` (`/v1/traces` is appended). */
  readonly url: string;
  /** Exports received and their bytes so far. */
  readonly received: { exports: number; bytes: number };
  stop(): Promise<void>;
}

/** Starts a sink on a free loopback port. */
export async function startOtlpSink(): Promise<OtlpSink> {
  const received = { exports: 0, bytes: 0 };
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (received.bytes += chunk.length));
    req.on('end', () => {
      received.exports++;
      const json = (req.headers['content-type'] ?? '').startsWith('application/json');
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : '');
    });
  });
  const port = await listenOn(server, '127.0.0.1', 0);
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
