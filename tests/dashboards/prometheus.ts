/**
 * A real Prometheus server for the dashboard e2e test: its own config and
 * data directory under the OS temp dir, listening on a free loopback port,
 * never the distribution's service (which may or may not be running, with its
 * own config, on :9090). The binary is `$PROMETHEUS`, or the one on the PATH
 * (Debian's `apt-get install prometheus`; .ci/run installs it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

/** One static scrape target and the labels Prometheus attaches to its series. */
export interface ScrapeTarget {
  /** `host:port`. */
  readonly address: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** One scrape job. */
export interface ScrapeJob {
  readonly job: string;
  readonly targets: readonly ScrapeTarget[];
}

/** One series of an instant-query answer. */
export interface Sample {
  readonly metric: Readonly<Record<string, string>>;
  /** The sample value (NaN and ±Inf as Prometheus spells them, parsed). */
  readonly value: number;
}

/** A running Prometheus. */
export interface PrometheusServer {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  /**
   * Runs an instant query at `timeS` (Unix seconds). Resolves with its
   * series (a scalar becomes one series without labels); rejects with
   * Prometheus' own error text on a parse or evaluation error.
   */
  query(expr: string, timeS: number): Promise<Sample[]>;
  /** Unix seconds of the last scrape of every active target (0 before its first), keyed by `job/address`. */
  lastScrapes(): Promise<Map<string, { readonly at: number; readonly health: string }>>;
  /** Stops the server and removes its data directory. */
  close(): Promise<void>;
}

/** The Prometheus binary: `$PROMETHEUS`, else the first `prometheus` on the PATH or in /usr/bin; undefined when none is installed. */
export function prometheusBinary(env: Readonly<Record<string, string | undefined>> = process.env): string | undefined {
  const onPath = (env['PATH'] ?? '').split(delimiter).filter((dir) => dir !== '').map((dir) => join(dir, 'prometheus'));
  const candidates = [env['PROMETHEUS'], ...onPath, '/usr/bin/prometheus'];
  return candidates.find((path): path is string => path !== undefined && path !== '' && existsSync(path));
}

const SCRAPE_INTERVAL = '1s';
const SCRAPE_TIMEOUT = '900ms';

function configYaml(jobs: readonly ScrapeJob[]): string {
  // JSON is YAML: no quoting rules to get wrong for addresses and label values.
  return JSON.stringify({
    global: { scrape_interval: SCRAPE_INTERVAL, scrape_timeout: SCRAPE_TIMEOUT, evaluation_interval: SCRAPE_INTERVAL },
    scrape_configs: jobs.map((job) => ({
      job_name: job.job,
      static_configs: job.targets.map((t) => ({ targets: [t.address], labels: t.labels })),
    })),
  });
}

/** Starts Prometheus scraping `jobs` every second and resolves once it is ready. */
export async function startPrometheus(binary: string, jobs: readonly ScrapeJob[]): Promise<PrometheusServer> {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-prometheus-'));
  writeFileSync(join(dir, 'prometheus.yml'), configYaml(jobs));
  let lastError: unknown;
  // A port picked free can be taken before Prometheus binds it: try a few.
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const child = spawn(
      binary,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--storage.tsdb.retention.time=1h',
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr = (stderr + text).slice(-4_000)));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // A test process that dies without running close() must not leave a server or its data behind.
    const killOnExit = () => {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    };
    process.once('exit', killOnExit);
    void exited.then(() => process.off('exit', killOnExit));
    const url = `http://127.0.0.1:${port}`;
    try {
      await untilReady(url, exited, () => stderr);
      return server(url, child, exited, dir);
    } catch (err) {
      lastError = err;
      child.kill('SIGKILL');
      await exited;
    }
  }
  rmSync(dir, { recursive: true, force: true });
  throw lastError;
}

async function untilReady(url: string, exited: Promise<number | null>, stderr: () => string): Promise<void> {
  let exitCode: number | null | undefined;
  void exited.then((code) => (exitCode = code ?? -1));
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (exitCode !== undefined) throw new Error(`prometheus exited with ${exitCode}: ${stderr()}`);
    try {
      if ((await fetch(`${url}/-/ready`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`prometheus not ready after 30 s: ${stderr()}`);
}

function server(url: string, child: ChildProcess, exited: Promise<number | null>, dir: string): PrometheusServer {
  return {
    url,
    async query(expr, timeS) {
      const response = await fetch(`${url}/api/v1/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ query: expr, time: String(timeS) }).toString(),
      });
      const body = (await response.json()) as QueryAnswer;
      if (body.status !== 'success' || body.data === undefined) throw new Error(`${body.errorType ?? response.status}: ${body.error ?? 'no data'}`);
      return samples(body.data);
    },
    async lastScrapes() {
      const body = (await (await fetch(`${url}/api/v1/targets?state=active`)).json()) as TargetsAnswer;
      const out = new Map<string, { at: number; health: string }>();
      for (const t of body.data.activeTargets) {
        const at = Date.parse(t.lastScrape);
        out.set(`${t.labels['job'] ?? ''}/${t.scrapeUrl.replace(/^https?:\/\//, '').replace(/\/metrics$/, '')}`, { at: Number.isFinite(at) && at > 0 ? at / 1000 : 0, health: t.health });
      }
      return out;
    },
    async close() {
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface QueryAnswer {
  readonly status: string;
  readonly errorType?: string;
  readonly error?: string;
  readonly data?: { readonly resultType: string; readonly result: unknown };
}

interface TargetsAnswer {
  readonly data: { readonly activeTargets: readonly { readonly labels: Record<string, string>; readonly scrapeUrl: string; readonly lastScrape: string; readonly health: string }[] };
}

function samples(data: NonNullable<QueryAnswer['data']>): Sample[] {
  switch (data.resultType) {
    case 'vector':
      return (data.result as { metric: Record<string, string>; value: [number, string] }[]).map((r) => ({ metric: r.metric, value: sampleValue(r.value[1]) }));
    case 'scalar':
      return [{ metric: {}, value: sampleValue((data.result as [number, string])[1]) }];
    default:
      throw new Error(`unexpected result type ${data.resultType} (a panel query must be an instant vector)`);
  }
}

/** Prometheus writes infinities as `+Inf`/`-Inf`, which Number() does not read. */
function sampleValue(text: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  return Number(text);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}
