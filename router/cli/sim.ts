/**
 * `switchyard sim`: the engine simulator. It lives in loadtest/, which
 * `switchyard serve` must never load (lint forbids static imports of it from
 * router/), so it is imported on demand, only when this command runs.
 */
import { parseHostPort, type HostPort } from '../config/host-port.ts';

const usage = (knobs: string): string => `Usage: switchyard sim --listen HOST:PORT --model NAME [--metrics-dialect vllm|sglang|llamacpp|tgi|none] [--record] [--otlp-traces-endpoint URL] [knobs]

Runs the engine simulator (an OpenAI/vLLM look-alike). --metrics-dialect picks whose metric names
/metrics serves (default vllm; none answers it 404). --record keeps, per x-request-id, what arrived
and a hash of what was sent (in-process tests read them; off by default, as it costs CPU per
request). --otlp-traces-endpoint exports an llm_request span per inference request over OTLP
HTTP/protobuf to that traces URL, the child of the request's traceparent, as vLLM's flag of the
same name does. Knobs (times in ms):
${knobs}
Each knob can also be set per request with an x-sim-<knob> header.
`;

/** The `--listen` flag's address. */
function listenAddress(value: string): HostPort {
  try {
    return parseHostPort(value);
  } catch (err) {
    throw new Error(`--listen: ${(err as Error).message}`, { cause: err });
  }
}

/** `switchyard sim`: runs until SIGTERM/SIGINT. */
export async function sim(argv: readonly string[]): Promise<number> {
  const [{ EngineSimulator }, { knobsFromFlags, knobsHelp }, { SIM_METRICS_DIALECTS }] = await Promise.all([
    import('../../loadtest/sim/server.ts'),
    import('../../loadtest/sim/knobs.ts'),
    import('../../loadtest/sim/metrics-text.ts'),
  ]);
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(usage(knobsHelp()));
    return 0;
  }
  let listen: HostPort = { host: '127.0.0.1', port: 8000 };
  let model = 'sim-model';
  let metricsDialect: (typeof SIM_METRICS_DIALECTS)[number] = 'vllm';
  // Off for benchmark engines: see SimOptions.record.
  let record = false;
  let otlpTracesEndpoint: string | undefined;
  let parsed;
  try {
    parsed = knobsFromFlags(argv);
    for (let i = 0; i < parsed.rest.length; i++) {
      const arg = parsed.rest[i] as string;
      if (arg === '--record') {
        record = true;
        continue;
      }
      const [flag, inline] = arg.split('=', 2) as [string, string | undefined];
      const value = inline ?? parsed.rest[++i];
      if (value === undefined) throw new Error(`${flag} needs a value`);
      if (flag === '--listen') listen = listenAddress(value);
      else if (flag === '--model') model = value;
      else if (flag === '--otlp-traces-endpoint') otlpTracesEndpoint = value;
      else if (flag === '--metrics-dialect') {
        const dialect = SIM_METRICS_DIALECTS.find((d) => d === value);
        if (dialect === undefined) throw new Error(`--metrics-dialect: expected one of ${SIM_METRICS_DIALECTS.join(', ')}`);
        metricsDialect = dialect;
      }
      else throw new Error(`unknown flag ${flag} (see --help)`);
    }
  } catch (err) {
    console.error(`switchyard sim: ${(err as Error).message}`);
    return 2;
  }
  const tracing = otlpTracesEndpoint === undefined ? undefined : new (await import('../../loadtest/sim/otlp-spans.ts')).SimTracing(otlpTracesEndpoint, model);
  const engine = new EngineSimulator({ model, knobs: parsed.knobs, metricsDialect, record, ...(tracing === undefined ? {} : { tracing }) });
  const port = await engine.listen(listen.host, listen.port);
  console.log(JSON.stringify({ msg: 'engine simulator listening', model, port, metricsDialect, knobs: engine.knobs }));
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  await engine.close();
  await tracing?.close();
  return 0;
}
