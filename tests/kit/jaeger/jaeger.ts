/**
 * Test support: a real Jaeger (v1.75.0's all-in-one, built once and cached
 * by tests/kit/jaeger/build.sh) on free loopback ports, its OTLP receivers
 * taking spans and its query API giving traces back.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePorts } from '../free-ports.ts';

const BUILD = fileURLToPath(new URL('./build.sh', import.meta.url));
const CONFIG = fileURLToPath(new URL('./config.yaml', import.meta.url));

/** One span of a trace as Jaeger's query API returns it. */
export interface JaegerSpan {
  readonly spanID: string;
  readonly operationName: string;
  /** The span's parent, when it has one in any trace. */
  readonly parentSpanID: string | undefined;
  readonly service: string;
  readonly tags: Readonly<Record<string, unknown>>;
  readonly events: readonly string[];
}

/** A running Jaeger. */
export interface Jaeger {
  /** OTLP over HTTP base URL (`/v1/traces` is the traces path). */
  readonly otlpHttp: string;
  /** OTLP over gRPC URL. */
  readonly otlpGrpc: string;
  /** The spans of `traceId`; empty when Jaeger has none. */
  trace(traceId: string): Promise<JaegerSpan[]>;
  /** Waits until `traceId` has at least `count` spans; rejects after `timeoutMs` with what it had. */
  waitForSpans(traceId: string, count: number, timeoutMs?: number): Promise<JaegerSpan[]>;
  stop(): Promise<void>;
}

interface RawTrace {
  readonly spans: { spanID: string; operationName: string; processID: string; references: { refType: string; spanID: string }[]; tags: { key: string; value: unknown }[]; logs: { fields: { key: string; value: unknown }[] }[] }[];
  readonly processes: Record<string, { serviceName: string }>;
}

/** Builds Jaeger if it is not cached yet, then starts it. */
export async function startJaeger(): Promise<Jaeger> {
  const binary = /^JAEGER=(.+)$/m.exec(execFileSync('bash', [BUILD], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }))?.[1];
  if (binary === undefined) throw new Error('tests/kit/jaeger/build.sh printed no JAEGER= line');
  const [query, queryGrpc, otlpGrpc, otlpHttp] = (await freePorts(4)) as [number, number, number, number];
  const child: ChildProcess = spawn(binary, ['--config', CONFIG], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: {
      PATH: process.env['PATH'] ?? '',
      JAEGER_QUERY_PORT: String(query),
      JAEGER_QUERY_GRPC_PORT: String(queryGrpc),
      JAEGER_OTLP_GRPC_PORT: String(otlpGrpc),
      JAEGER_OTLP_HTTP_PORT: String(otlpHttp),
      // Jaeger's own spans would go to localhost:4317.
      OTEL_TRACES_EXPORTER: 'none',
    },
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const api = `http://127.0.0.1:${query}/api`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`jaeger exited with ${child.exitCode}: ${stderr}`);
    if ((await fetch(`${api}/services`).then((r) => r.ok).catch(() => false)) && (await reachable(otlpHttp))) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`jaeger did not answer in 30 s: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const trace = async (traceId: string): Promise<JaegerSpan[]> => {
    const response = await fetch(`${api}/traces/${traceId}`);
    if (response.status === 404) return [];
    if (!response.ok) throw new Error(`jaeger query: ${response.status}`);
    const body = (await response.json()) as { data: RawTrace[] | null };
    return (body.data ?? []).flatMap((raw) =>
      raw.spans.map((span) => ({
        spanID: span.spanID,
        operationName: span.operationName,
        parentSpanID: span.references.find((ref) => ref.refType === 'CHILD_OF')?.spanID,
        service: raw.processes[span.processID]?.serviceName ?? '',
        tags: Object.fromEntries(span.tags.map((tag) => [tag.key, tag.value])),
        events: span.logs.map((log) => String(log.fields.find((field) => field.key === 'event')?.value)),
      })),
    );
  };
  return {
    otlpHttp: `http://127.0.0.1:${otlpHttp}`,
    otlpGrpc: `http://127.0.0.1:${otlpGrpc}`,
    trace,
    async waitForSpans(traceId, count, timeoutMs = 15_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const spans = await trace(traceId);
        if (spans.length >= count) return spans;
        if (Date.now() > until) throw new Error(`trace ${traceId} has ${spans.length} of ${count} spans after ${timeoutMs} ms: ${JSON.stringify(spans)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async stop() {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** True once something accepts connections on the port (the OTLP receivers start after the query API). */
async function reachable(port: number): Promise<boolean> {
  return fetch(`http://127.0.0.1:${port}/`).then(() => true, () => false);
}
