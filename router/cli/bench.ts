/**
 * `switchyard bench`: load tools that ship with the CLI. `bench load` points
 * the benchmarks' load generator at an adopter's own deployment. It lives in
 * loadtest/, which `switchyard serve` must never load (lint forbids static
 * imports of it from router/), so it is imported on demand, only when this
 * command runs. The comparison scenarios (switchyard against nginx, a bare
 * forwarder and itself) are not part of the CLI or the image: they run from
 * a checkout.
 */
import { unknownNameMessage } from '../config/did-you-mean.ts';
import { VERSION } from '../version.ts';

const USAGE = `Usage: switchyard bench <subcommand> [options]

Subcommands:
  load    send load to a deployment (a switchyard router or an OpenAI-compatible engine) and
          report latency, throughput, errors and whether the generator kept up
          (switchyard bench load --help)

The benchmark scenarios that compare switchyard with its peers run from a checkout of the
repository, not from this command: npm run bench -- <scenario> (npm run bench lists them).
`;

const SUBCOMMANDS = ['load'];

/** `switchyard bench`: returns the exit code. */
export async function bench(argv: readonly string[]): Promise<number> {
  const [subcommand, ...rest] = argv;
  switch (subcommand) {
    case 'load': {
      const { benchLoad } = await import('../../loadtest/load/command.ts');
      return benchLoad(rest, { version: VERSION });
    }
    case undefined:
    case '--help':
    case '-h':
      console.log(USAGE);
      return 0;
    default: {
      console.error(unknownNameMessage('switchyard bench: unknown subcommand', subcommand, SUBCOMMANDS, 'switchyard bench --help'));
      return 2;
    }
  }
}
