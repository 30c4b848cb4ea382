/**
 * Starts N engine simulators in this one process (for benchmarks that need
 * many endpoints) and prints their ports as one JSON line:
 * `{"msg":"engines listening","ports":[...]}`.
 *
 *   node loadtest/scenarios/micro/many-engines.ts --count 500 [--model NAME]
 */
import { parseArgs } from 'node:util';
import { EngineSimulator } from '../../sim/server.ts';

const { values } = parseArgs({ options: { count: { type: 'string', default: '500' }, model: { type: 'string', default: 'bench' } } });
const engines = Array.from({ length: Number(values.count) }, () => new EngineSimulator({ model: values.model }));
const ports: number[] = [];
for (const engine of engines) ports.push(await engine.listen());
console.log(JSON.stringify({ msg: 'engines listening', count: ports.length, ports }));
process.once('SIGTERM', () => void Promise.all(engines.map((e) => e.close())).then(() => process.exit(0)));
