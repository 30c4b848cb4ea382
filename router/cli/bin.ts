#!/usr/bin/env node
/**
 * The `switchyard` command: `serve` runs the router, `check-config`
 * validates a configuration and prints it, `status` shows the fleet as a
 * router sees it, `sim` the engine simulator, `bench load` load against a
 * deployment, `check` the image's smoke test (the Helm chart's test hook).
 * The benchmark scenarios are not part of the command: they compare the
 * router with its peers from a checkout (`npm run bench`), and the shipped
 * CLI never loads them.
 */
import { unknownNameMessage } from '../config/did-you-mean.ts';
import { bench } from './bench.ts';
import { check } from './check.ts';
import { checkConfig } from './check-config.ts';
import { serve } from './serve.ts';
import { sim } from './sim.ts';
import { status } from './status.ts';
import { VERSION } from '../version.ts';

const USAGE = `Usage: switchyard <command> [options]

Commands:
  serve          run the router (switchyard serve --help)
  check-config   validate a configuration and print it, secrets redacted; exit 0 or 2
                 (switchyard check-config --help)
  status         the fleet as a router sees it, from its admin port
                 (switchyard status --help)
  sim            run the engine simulator (switchyard sim --help)
  bench load     send load to a deployment and report latency, throughput and errors
                 (switchyard bench --help)
  check          GET URLs, exit 0 only if all answer 2xx (switchyard check --help)

  --version      print the version
`;

const COMMANDS = ['serve', 'check-config', 'status', 'sim', 'bench', 'check'];

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      return serve(rest, process.env);
    case 'status':
      return status(rest);
    case 'sim':
      return sim(rest);
    case 'bench':
      return bench(rest);
    case 'check':
      return check(rest);
    case 'check-config':
      return checkConfig(rest, process.env);
    case '--version':
    case '-v':
      console.log(`switchyard ${VERSION}`);
      return 0;
    case undefined:
    case '--help':
    case '-h':
      console.log(USAGE);
      return 0;
    default: {
      console.error(unknownNameMessage('switchyard: unknown command', command, COMMANDS, 'switchyard --help'));
      return 2;
    }
  }
}

// A failure exits at once: a timer or socket left behind by a half-started
// command must not keep a process alive that can do nothing (stderr is
// written synchronously to pipes and files, so the reason is not lost).
main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exit(code);
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
