/**
 * `switchyard status`: the fleet as one router sees it, from its admin port's
 * `/debug/endpoints` (a port-forwarded pod's too): a table of endpoints with
 * the one reason each is not routable, then the discovery sources and the
 * objects they skipped. `--json` prints the document itself; `--watch` redraws.
 */
import { parseArgs } from 'node:util';
import { Agent } from 'undici';
import { upstreamGet } from '../../discovery/upstream-body.ts';
import { readSecretFile } from '../config/secret-file.ts';
import { statusTable, type DebugDocument } from './status-table.ts';

const USAGE = `Usage: switchyard status [--admin URL] [--token-file FILE] [--watch [SECONDS]] [--json]

Shows the fleet as the router at URL sees it: each endpoint with its models,
whether it is routable (or the one reason it is not), requests in flight, the
engine's waiting queue and KV-cache use, the safe-start limit, the age of its
metrics; then the discovery sources and the pods or slices they skipped.

  --admin URL        the router's admin port (default http://127.0.0.1:9090;
                     kubectl port-forward svc/<release>-admin 9090 reaches a pod)
  --token-file FILE  file holding the admin token (adminTokenFile), when set
  --watch [SECONDS]  redraw every SECONDS (default 2) until Ctrl-C
  --json             print /debug/endpoints as JSON instead of the table
`;

/** Largest document read (bytes): 20 skipped objects per source and a few thousand endpoints fit. */
const MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;
const TIMEOUT_MS = 5_000;

/** Runs the command; returns the exit code (0, 1 when the router cannot be read, 2 on a usage error). */
export async function status(argv: readonly string[]): Promise<number> {
  // A bare `--watch` (the common case) means every 2 s; parseArgs wants its value attached.
  const args = argv.map((arg, i) => (arg === '--watch' && (argv[i + 1] === undefined || argv[i + 1]?.startsWith('-') === true) ? '--watch=2' : arg));
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: { admin: { type: 'string', default: 'http://127.0.0.1:9090' }, 'token-file': { type: 'string' }, watch: { type: 'string' }, json: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false } },
      allowPositionals: false,
    }));
  } catch (err) {
    console.error(`switchyard status: ${(err as Error).message} (see switchyard status --help)`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const watchS = values.watch === undefined ? undefined : Number(values.watch);
  if (watchS !== undefined && !(watchS > 0)) {
    console.error('switchyard status: --watch takes a number of seconds above 0');
    return 2;
  }
  let url: URL;
  try {
    url = new URL('/debug/endpoints', values.admin);
  } catch {
    console.error(`switchyard status: --admin ${JSON.stringify(values.admin)} is not a URL`);
    return 2;
  }
  let token: string | undefined;
  try {
    token = values['token-file'] === undefined ? undefined : readSecretFile(values['token-file'], '--token-file');
  } catch (err) {
    console.error(`switchyard status: ${(err as Error).message}`);
    return 2;
  }
  const dispatcher = new Agent();
  try {
    for (;;) {
      const read = await readDocument(dispatcher, url, token);
      if (typeof read === 'string') {
        console.error(`switchyard status: ${read}`);
        if (watchS === undefined) return 1;
      } else {
        const text = values.json ? JSON.stringify(read, null, 2) : statusTable(read, Date.now()).join('\n');
        // Redraw in place on a terminal; a pipe gets one document after another.
        if (watchS !== undefined && process.stdout.isTTY) process.stdout.write('\x1b[H\x1b[2J');
        console.log(text);
        if (watchS === undefined) return 0;
      }
      await new Promise((resolve) => setTimeout(resolve, watchS * 1000));
    }
  } finally {
    await dispatcher.close();
  }
}

async function readDocument(dispatcher: Agent, url: URL, token: string | undefined): Promise<DebugDocument | string> {
  try {
    return await upstreamGet(
      dispatcher,
      { url, signal: AbortSignal.timeout(TIMEOUT_MS), headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS, ...(token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } }) },
      async (answer) => {
        if (answer.statusCode === 401) return `${url.href} answered 401: the admin port needs its token (--token-file)`;
        if (answer.statusCode !== 200) return `${url.href} answered ${answer.statusCode}`;
        return JSON.parse(await answer.text(MAX_DOCUMENT_BYTES)) as DebugDocument;
      },
    );
  } catch (err) {
    return `cannot read ${url.href}: ${(err as Error).message}`;
  }
}
