/**
 * Where one request's CPU goes, by stage of the request path, from a V8 CPU
 * profile of a router that served a known number of requests. Each sample is
 * charged to the innermost frame on its stack that a stage claims (a socket
 * write made by the forwarder is `write`, a histogram observed at settle is
 * `metrics`), so the stages add up to the profiled busy time and none is
 * counted twice. Module loading is left out (a process's start, not a
 * request's cost), and so is idle time.
 *
 *   node loadtest/report/request-breakdown.ts FILE.cpuprofile --requests N
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { CpuProfile } from './profile-summary.ts';

/** The stages of the request path a sample is charged to, in the order the report lists them. */
export const STAGES = ['accept', 'parse', 'read body', 'classify', 'schedule', 'headers', 'forward', 'upstream client', 'write', 'metrics', 'gc', 'native', 'other'] as const;
export type Stage = (typeof STAGES)[number];

interface Frame {
  readonly functionName: string;
  readonly url: string;
}

/** Native functions of Node's stream bindings that hand bytes to the kernel. */
const WRITE_FUNCTIONS = new Set(['writev', 'writeBuffer', 'writeUtf8String', 'writeLatin1String', 'writeAsciiString', 'writeGeneric', 'writevGeneric', '_writeRaw', '_writeGeneric', '_writev', 'doWrite']);
const PARSER_FUNCTIONS = new Set(['parserOnHeadersComplete', 'parserOnHeaders', 'parserOnBody', 'parserOnMessageComplete', 'execute', 'onParserExecute', 'onParserExecuteCommon']);
const ACCEPT_FUNCTIONS = new Set(['onconnection', 'connectionListener', 'connectionListenerInternal']);

/** The request hooks that enrich a request's facts (and learn after the decision) count with classify. */
const CLASSIFY_HOOKS = /\/router\/request\/(request-hooks|session-assignment-hook|prefix-facts-hook|response-pin-hook)\.ts/;
/** The prefix group and response pin tables count with scheduling's state, as the load view does. */
const ROUTING_TABLES = /\/router\/request\/(prefix-groups|response-pins)\.ts/;

/** The stage `frame` belongs to, or undefined when it is none's (the caller's stage then counts). */
export function stageOf(frame: Frame): Stage | undefined {
  const { functionName: name, url } = frame;
  if (name === '(garbage collector)') return 'gc';
  if (name === '(program)') return 'native';
  if (WRITE_FUNCTIONS.has(name)) return 'write';
  if (url.includes('/prom-client/') || url.includes('/router/metrics/')) return 'metrics';
  if (url.includes('/router/proxy/headers.ts')) return 'headers';
  if (url.includes('/router/request/classify.ts') || CLASSIFY_HOOKS.test(url) || url.includes('/router/scheduling/prefix-keys.ts') || url.includes('/router/scheduling/priority.ts')) return 'classify';
  if (url.includes('/router/admission/') || url.includes('/router/scheduling/') || url.includes('/router/load/') || ROUTING_TABLES.test(url)) return 'schedule';
  if (url.includes('/router/request/') && !url.endsWith('/lifecycle.ts')) return 'read body';
  if (url.includes('/undici/')) return 'upstream client';
  if (PARSER_FUNCTIONS.has(name) || url === 'node:_http_common') return 'parse';
  if (ACCEPT_FUNCTIONS.has(name)) return 'accept';
  // The bare forwarder's few functions (loadtest/scenarios/baselines/bare-forwarder.ts) are all forwarding.
  if (url.includes('/router/') || url.includes('/loadtest/scenarios/baselines/bare-forwarder.ts')) return 'forward';
  return undefined;
}

/** CPU time (µs) per stage over the profile, and the busy total; module loading and idle left out. */
export function stageTimes(profile: CpuProfile & { readonly nodes: readonly { readonly id: number; readonly children?: readonly number[] }[] }): { busy: number; byStage: Map<Stage, number> } {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const memo = new Map<number, Stage | 'startup' | 'idle'>();
  const classify = (id: number): Stage | 'startup' | 'idle' => {
    const known = memo.get(id);
    if (known !== undefined) return known;
    let stage: Stage | 'startup' | 'idle' = 'other';
    let found = false;
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = nodes.get(at)?.callFrame;
      if (frame === undefined) continue;
      if (frame.functionName === '(idle)') {
        stage = 'idle';
        break;
      }
      // Loading a module is start-up, whatever stage asked for it (the Kubernetes client loads on first use).
      if (frame.url.startsWith('node:internal/modules/')) {
        stage = 'startup';
        break;
      }
      if (!found) {
        const own = stageOf(frame);
        if (own !== undefined) {
          stage = own;
          found = true;
        }
      }
    }
    memo.set(id, stage);
    return stage;
  };
  const byStage = new Map<Stage, number>(STAGES.map((stage) => [stage, 0]));
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const stage = classify(id);
    if (stage === 'startup' || stage === 'idle') return;
    const micros = profile.timeDeltas[i] ?? 0;
    busy += micros;
    byStage.set(stage, (byStage.get(stage) ?? 0) + micros);
  });
  return { busy, byStage };
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { requests: { type: 'string' } } });
  const file = positionals[0];
  const requests = Number(values.requests);
  if (file === undefined || !(requests > 0)) throw new Error('usage: request-breakdown.ts FILE.cpuprofile --requests N');
  const { busy, byStage } = stageTimes(JSON.parse(readFileSync(file, 'utf8')) as Parameters<typeof stageTimes>[0]);
  console.log(`${(busy / requests).toFixed(1)} µs of profiled CPU per request (${requests} requests)`);
  for (const [stage, micros] of byStage) console.log(`${stage.padEnd(16)} ${(micros / requests).toFixed(1).padStart(6)} µs  ${((100 * micros) / busy).toFixed(1).padStart(5)}%`);
}
