/**
 * One `ab -k` run (apache2-utils): a fixed JSON body POSTed `requests` times
 * at `concurrency` over kept-alive connections, and what ab reports of it.
 */
import { execFileSync } from 'node:child_process';

/** What one ab run reports. */
export interface AbResult {
  readonly requestsPerS: number;
  /** Failed requests (connection, length, exceptions) plus non-2xx answers. */
  readonly failed: number;
}

/** Runs `ab -q -k -c concurrency -n requests -p bodyFile` against `url`; throws when ab fails to run. */
export function abKeepAlive(url: string, bodyFile: string, concurrency = 64, requests = 20_000): AbResult {
  const out = execFileSync('ab', ['-q', '-k', '-c', String(concurrency), '-n', String(requests), '-p', bodyFile, '-T', 'application/json', url], { encoding: 'utf8' });
  return {
    requestsPerS: Number(/Requests per second:\s+([\d.]+)/.exec(out)?.[1]),
    failed: Number(/Failed requests:\s+(\d+)/.exec(out)?.[1]) + Number(/Non-2xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0),
  };
}
