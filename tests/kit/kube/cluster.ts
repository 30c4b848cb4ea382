/**
 * End-to-end harness against a real kube-apiserver + etcd built from source
 * (apiserver/build.sh, cached) and started on loopback (apiserver/start.sh).
 * Everything started here is stopped by `destroy()`, and, should the test
 * process die first, by an exit handler that kills the recorded pids.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Agent } from 'undici';
import { parseAllDocuments } from 'yaml';

const run = promisify(execFile);
const START_SH = fileURLToPath(new URL('./apiserver/start.sh', import.meta.url));
/** The RBAC manifests the chart ships. */
export const RBAC_DIR = fileURLToPath(new URL('../../../discovery/kubernetes/rbac/', import.meta.url));

const LIVE_PIDS = new Set<number>();
// A signal (the test runner's timeout, Ctrl-C) becomes a normal exit, so exit handlers clean up.
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
  if (process.listenerCount(signal) === 0) process.once(signal, () => process.exit(128 + (signal === 'SIGTERM' ? 15 : signal === 'SIGINT' ? 2 : 1)));
}
process.on('exit', () => {
  for (const pid of LIVE_PIDS) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

/** An API answer. */
export interface ApiAnswer {
  readonly status: number;
  /** Parsed JSON (text when not JSON). */
  readonly body: unknown;
}

/** A running etcd + kube-apiserver pair. */
export class Cluster {
  readonly dir: string;
  readonly server: string;
  readonly ca: string;
  readonly #admin: Agent;
  readonly #anonymous: Agent;
  #env: Record<string, string>;

  private constructor(dir: string, env: Record<string, string>) {
    this.dir = dir;
    this.#env = env;
    this.server = env['KUBE_APISERVER_URL'] as string;
    this.ca = readFileSync(env['KUBE_CA'] as string, 'utf8');
    this.#admin = new Agent({ connect: { ca: this.ca, cert: readFileSync(env['KUBE_ADMIN_CERT'] as string), key: readFileSync(env['KUBE_ADMIN_KEY'] as string) } });
    this.#anonymous = new Agent({ connect: { ca: this.ca } });
    this.#track();
  }

  /** Builds (cached) and starts the pair in a fresh directory; returns once /readyz is 200. */
  static async start(): Promise<Cluster> {
    await removeLeftoverClusters();
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-e2e-'));
    writeFileSync(join(dir, 'owner.pid'), String(process.pid));
    // A port picked as free can still be taken before etcd or the apiserver binds it: try again.
    for (let attempt = 1; ; attempt++) {
      try {
        await run('bash', [START_SH, 'up', dir], { timeout: 15 * 60_000 });
        return new Cluster(dir, readEnv(dir));
      } catch (err) {
        await run('bash', [START_SH, 'down', dir]).catch(() => undefined);
        if (attempt === 3 || !/address already in use/.test(String(err))) throw err;
      }
    }
  }

  /** kube-apiserver's process id (changes on restart). */
  get apiserverPid(): number {
    return Number(this.#env['APISERVER_PID']);
  }

  /** Stops kube-apiserver only (etcd keeps the data). */
  async stopApiserver(): Promise<void> {
    await run('bash', [START_SH, 'apiserver-stop', this.dir]);
  }

  /** Starts kube-apiserver again on the same port; resolves once /readyz is 200. */
  async startApiserver(): Promise<void> {
    await run('bash', [START_SH, 'apiserver-start', this.dir], { timeout: 180_000 });
    this.#env = readEnv(this.dir);
    this.#track();
  }

  /** Stops both processes and removes the directory. */
  async destroy(): Promise<void> {
    await run('bash', [START_SH, 'down', this.dir]).catch(() => undefined);
    LIVE_PIDS.delete(Number(this.#env['APISERVER_PID']));
    LIVE_PIDS.delete(Number(this.#env['ETCD_PID']));
    await Promise.allSettled([this.#admin.close(), this.#anonymous.close()]);
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** A request as cluster admin (system:masters client certificate). */
  admin(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<ApiAnswer> {
    return this.#request(this.#admin, {}, method, path, body, contentType);
  }

  /** A request with a bearer token. */
  withToken(token: string, method: string, path: string, body?: unknown): Promise<ApiAnswer> {
    return this.#request(this.#anonymous, { authorization: `Bearer ${token}` }, method, path, body, 'application/json');
  }

  /** Admin request that must answer 2xx. */
  async must(method: string, path: string, body?: unknown, contentType?: string): Promise<unknown> {
    const answer = await this.admin(method, path, body, contentType);
    if (answer.status < 200 || answer.status > 299) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  }

  /** Creates the objects of a YAML file in `namespace`; `edit` may change each first. */
  async applyFile(file: string, namespace: string, edit: (object: Record<string, unknown>) => void = () => undefined): Promise<void> {
    for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
      const object = doc.toJS() as Record<string, unknown> & { apiVersion: string; kind: string };
      edit(object);
      await this.must('POST', collectionPath(object.apiVersion, object.kind, namespace), object);
    }
  }

  /** A short-lived token for a service account (TokenRequest). */
  async token(namespace: string, serviceAccount: string): Promise<string> {
    const body = (await this.must('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${serviceAccount}/token`, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: 3600 },
    })) as { status: { token: string } };
    return body.status.token;
  }

  /**
   * What the kubelet mounts into the router's pod: a directory with `token`,
   * the apiserver's `ca.crt` and `namespace` (for `--discovery-service-account-dir`).
   */
  mountServiceAccount(token: string, namespace: string): string {
    const dir = join(this.dir, 'router-sa');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'token'), token);
    writeFileSync(join(dir, 'ca.crt'), this.ca);
    writeFileSync(join(dir, 'namespace'), namespace);
    return dir;
  }

  /** A kubeconfig that authenticates with `token` (for `--kubeconfig`). */
  writeKubeconfig(file: string, token: string, namespace: string): void {
    writeFileSync(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        `clusters: [{name: e2e, cluster: {server: "${this.server}", certificate-authority: "${this.#env['KUBE_CA']}"}}]`,
        `users: [{name: router, user: {token: "${token}"}}]`,
        `contexts: [{name: e2e, context: {cluster: e2e, user: router, namespace: ${namespace}}}]`,
        'current-context: e2e',
        '',
      ].join('\n'),
    );
  }

  /** The apiserver's CA file. */
  get caFile(): string {
    return this.#env['KUBE_CA'] as string;
  }

  /** Host and port, as KUBERNETES_SERVICE_HOST/PORT would carry them. */
  get hostPort(): { host: string; port: string } {
    const url = new URL(this.server);
    return { host: url.hostname, port: url.port };
  }

  #track(): void {
    LIVE_PIDS.add(Number(this.#env['APISERVER_PID']));
    LIVE_PIDS.add(Number(this.#env['ETCD_PID']));
  }

  async #request(agent: Agent, headers: Record<string, string>, method: string, path: string, body: unknown, contentType: string): Promise<ApiAnswer> {
    const url = new URL(path, this.server);
    const response = await agent.request({
      origin: url.origin,
      path: url.pathname + url.search,
      method,
      headers: { accept: 'application/json', ...headers, ...(body === undefined ? {} : { 'content-type': contentType }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    const text = await response.body.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON; keep the text
    }
    return { status: response.statusCode, body: parsed };
  }
}

/** Stops clusters left by earlier runs whose test process died (SIGKILL skips exit handlers). */
async function removeLeftoverClusters(): Promise<void> {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith('switchyard-e2e-')) continue;
    const dir = join(tmpdir(), name);
    let owner: number;
    try {
      owner = Number(readFileSync(join(dir, 'owner.pid'), 'utf8'));
    } catch {
      continue;
    }
    try {
      process.kill(owner, 0);
      continue; // its owner still runs
    } catch {
      // owner gone
    }
    if (existsSync(join(dir, 'env'))) await run('bash', [START_SH, 'down', dir]).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

function readEnv(dir: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of readFileSync(join(dir, 'env'), 'utf8').split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) env[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return env;
}

function collectionPath(apiVersion: string, kind: string, namespace: string): string {
  const plural = `${kind.toLowerCase()}s`;
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  return `${base}/namespaces/${namespace}/${plural}`;
}

/** Percentile (nearest rank) of `values`, `p` in 0-100. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}

/** One endpoint in `/debug/endpoints`. */
export interface DebugEndpoint {
  readonly id: string;
  readonly url: string;
  readonly routable: boolean;
  readonly ready: boolean;
  readonly draining: boolean;
  readonly inFlight: number;
  readonly models: string[] | null;
  readonly load: { readonly safeStart: { readonly limit: number; readonly reason: string } | null };
}

/** The parts of `/debug/endpoints` the tests read. */
export interface DebugDocument {
  readonly endpoints: DebugEndpoint[];
  readonly discovery: { name: string; healthy: boolean; synced: boolean; error: string | null; restarts: Record<string, number>; endpoints: number; objects: number; lastListAt: string | null; skipped: { id: string; reason: string }[] }[];
  /** The replicas the router takes its share against (null from routers without it). */
  readonly replicas: { readonly count: number | null; readonly source: string; readonly watch: { readonly synced: boolean } | null } | null;
}

/** Reads `/debug/endpoints`. */
export async function debugDocument(admin: string): Promise<DebugDocument> {
  const response = await fetch(`${admin}/debug/endpoints`);
  return (await response.json()) as DebugDocument;
}

/**
 * Polls `/debug/endpoints` every 2 ms until `condition` holds; returns the
 * milliseconds since `since` (the moment the API write was sent).
 */
export async function waitForDebug(admin: string, condition: (doc: DebugDocument) => boolean, since: number, what: string, timeoutMs = 20_000): Promise<number> {
  for (;;) {
    const doc = await debugDocument(admin);
    if (condition(doc)) return performance.now() - since;
    if (performance.now() - since > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}; last: ${JSON.stringify(doc.endpoints.map((e) => [e.id, e.routable, e.draining]))} ${JSON.stringify(doc.discovery)}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** Is the endpoint `id` routable in `doc` (false when absent). */
export function routable(doc: DebugDocument, id: string): boolean {
  return doc.endpoints.some((e) => e.id === id && e.routable);
}

/** A finished chat completion. */
export interface ChatResult {
  readonly status: number;
  readonly text: string;
  /** SSE stream ended with `data: [DONE]`. */
  readonly done: boolean;
}

/** POSTs a chat completion and reads the whole answer; `headers` may carry x-sim-* knobs. */
export async function chat(traffic: string, options: { stream?: boolean; headers?: Record<string, string> } = {}): Promise<ChatResult> {
  const response = await fetch(`${traffic}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...options.headers },
    body: JSON.stringify({ model: 'sim-model', stream: options.stream ?? false, messages: [{ role: 'user', content: 'hi' }] }),
  });
  const text = await response.text();
  return { status: response.status, text, done: text.trimEnd().endsWith('data: [DONE]') };
}
