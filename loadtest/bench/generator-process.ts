/**
 * Entry point of one load-generator child process: receives a
 * {@link LoadSpec} over IPC, runs it, streams progress, sends the result and
 * exits. See `generators.ts`.
 */
import { runLoad } from './generator.ts';
import type { LoadSpec } from './load-spec.ts';

process.once('message', (spec: LoadSpec) => {
  runLoad(spec, (progress) => process.send?.({ progress })).then(
    (result) => process.send?.({ result }, () => process.disconnect()),
    (err: unknown) => process.send?.({ error: String((err as Error).stack ?? err) }, () => process.disconnect()),
  );
});
