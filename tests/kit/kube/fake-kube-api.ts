/**
 * An in-process fake of the Kubernetes list/watch protocol over real HTTP on
 * 127.0.0.1, for the faults a real API server will not produce on demand:
 * 410 Gone, a watch cut in the middle of an event, a watch that goes silent,
 * malformed events, the API down for a while. Tests only; it implements
 * just enough of the protocol (list with limit/continue, watch from a
 * resourceVersion, equality label selectors, bookmarks).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

type KubeObject = { metadata: { name: string; namespace?: string; labels?: Record<string, string>; resourceVersion?: string } } & Record<string, unknown>;

interface StoredEvent {
  readonly rv: number;
  readonly path: string;
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly object: KubeObject;
}

interface Watcher {
  readonly path: string;
  readonly selector: (labels: Record<string, string> | undefined) => boolean;
  readonly res: ServerResponse;
  silenced: boolean;
}

/** One recorded request. */
export interface RecordedRequest {
  readonly kind: 'list' | 'watch';
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly authorization: string | undefined;
}

/** The fake API server. */
export class FakeKubeApi {
  readonly requests: RecordedRequest[] = [];
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  readonly #objects = new Map<string, Map<string, KubeObject>>(); // path -> name -> object
  readonly #events: StoredEvent[] = [];
  readonly #watchers = new Set<Watcher>();
  #rv = 100;
  #compactedRv = 0;
  #port = 0;
  /** When true every connection is reset at once (API unreachable). */
  down = false;
  /** Answer the next N lists with this status (then normal). */
  failLists: { count: number; status: number } = { count: 0, status: 500 };
  /** Answer watches whose resourceVersion is compacted with HTTP 410 instead of an ERROR event. */
  goneAsHttpStatus = false;
  /** New watches start silenced: they stay open and receive nothing. */
  silenceNewWatches = false;
  /** Compact history just before answering the next watch (so its resourceVersion is too old). */
  compactBeforeNextWatch = false;

  constructor() {
    this.#server = createServer((req, res) => this.#handle(req, res));
    this.#server.on('connection', (socket: Socket) => {
      if (this.down) {
        socket.destroy();
        return;
      }
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(this.#port, '127.0.0.1', resolve));
    this.#port = (this.#server.address() as { port: number }).port;
    return `http://127.0.0.1:${this.#port}`;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** Latest resourceVersion. */
  get resourceVersion(): number {
    return this.#rv;
  }

  /** Open watch connections. */
  get watchers(): number {
    return this.#watchers.size;
  }

  /** Creates or replaces an object at `path` (a collection path) and tells watchers. */
  put(path: string, object: KubeObject): void {
    const collection = this.#collection(path);
    const type = collection.has(object.metadata.name) ? 'MODIFIED' : 'ADDED';
    const stored = this.#stamp(object);
    collection.set(object.metadata.name, stored);
    this.#publish({ rv: this.#rv, path, type, object: stored });
  }

  /** Deletes an object and tells watchers. */
  delete(path: string, name: string): void {
    const collection = this.#collection(path);
    const prior = collection.get(name);
    if (prior === undefined) return;
    collection.delete(name);
    const stored = this.#stamp(prior);
    this.#publish({ rv: this.#rv, path, type: 'DELETED', object: stored });
  }

  /** Changes the store with no watch event at all (a lost event). */
  deleteSilently(path: string, name: string): void {
    this.#collection(path).delete(name);
    this.#rv++;
  }

  /** Forgets history up to now: watches from older resourceVersions get 410. Open watches get an ERROR 410 event. */
  compact(): void {
    this.#compactedRv = this.#rv;
    this.#events.length = 0;
    for (const w of this.#watchers) if (!w.silenced) this.#writeLine(w, JSON.stringify(goneEvent()));
  }

  /** Sends a raw line (malformed on purpose) to every open watch. */
  sendRaw(line: string): void {
    for (const w of this.#watchers) this.#writeLine(w, line);
  }

  /** Sends a BOOKMARK at the current resourceVersion to every open watch that asked for them. */
  bookmark(): void {
    for (const w of this.#watchers) {
      if (!w.silenced) this.#writeLine(w, JSON.stringify({ type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: String(this.#rv) } } }));
    }
  }

  /** Makes every open watch silent (it stays open, events are not delivered). */
  silenceWatches(): void {
    for (const w of this.#watchers) w.silenced = true;
  }

  /** Cuts every open watch; with `midEvent`, after writing half of an event line. */
  cutWatches(midEvent: boolean): void {
    for (const w of [...this.#watchers]) {
      if (midEvent) w.res.write('{"type":"DELETED","object":{"metadata":{"na');
      w.res.socket?.destroy();
      this.#watchers.delete(w);
    }
  }

  /** Ends every open watch cleanly (as after timeoutSeconds). */
  endWatches(): void {
    for (const w of [...this.#watchers]) {
      w.res.end();
      this.#watchers.delete(w);
    }
  }

  /** Takes the API away: open connections are reset, new ones refused. */
  goDown(): void {
    this.down = true;
    this.#watchers.clear();
    for (const socket of this.#sockets) socket.destroy();
  }

  comeBack(): void {
    this.down = false;
  }

  #collection(path: string): Map<string, KubeObject> {
    let collection = this.#objects.get(path);
    if (collection === undefined) this.#objects.set(path, (collection = new Map<string, KubeObject>()));
    return collection;
  }

  #stamp(object: KubeObject): KubeObject {
    this.#rv++;
    return { ...structuredClone(object), metadata: { ...structuredClone(object.metadata), resourceVersion: String(this.#rv) } };
  }

  #publish(event: StoredEvent): void {
    this.#events.push(event);
    for (const w of this.#watchers) {
      if (!w.silenced && w.path === event.path && w.selector(event.object.metadata.labels)) this.#writeLine(w, JSON.stringify({ type: event.type, object: event.object }));
    }
  }

  #writeLine(w: Watcher, line: string): void {
    w.res.write(`${line}\n`);
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://fake');
    const query = Object.fromEntries(url.searchParams);
    const watch = query['watch'] === 'true' || query['watch'] === '1';
    this.requests.push({ kind: watch ? 'watch' : 'list', path: url.pathname, query, authorization: req.headers.authorization });
    const selector = parseSelector(query['labelSelector']);
    if (watch) return this.#watch(url.pathname, query, selector, res);
    if (this.failLists.count > 0) {
      this.failLists.count--;
      return sendJson(res, this.failLists.status, { kind: 'Status', code: this.failLists.status, reason: 'InternalError', message: 'injected failure' });
    }
    const items = [...this.#collection(url.pathname).values()].filter((o) => selector(o.metadata.labels));
    const offset = Number(query['continue'] ?? 0);
    const limit = Number(query['limit'] ?? items.length) || items.length;
    const page = items.slice(offset, offset + limit);
    const more = offset + limit < items.length;
    sendJson(res, 200, { kind: 'List', apiVersion: 'v1', metadata: { resourceVersion: String(this.#rv), ...(more ? { continue: String(offset + limit) } : {}) }, items: page });
  }

  #watch(path: string, query: Record<string, string>, selector: Watcher['selector'], res: ServerResponse): void {
    if (this.compactBeforeNextWatch) {
      this.compactBeforeNextWatch = false;
      this.#rv++;
      this.compact();
    }
    const from = Number(query['resourceVersion'] ?? this.#rv);
    if (from < this.#compactedRv) {
      if (this.goneAsHttpStatus) return sendJson(res, 410, goneEvent().object);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`${JSON.stringify(goneEvent())}\n`);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    const watcher: Watcher = { path, selector, res, silenced: this.silenceNewWatches };
    this.#watchers.add(watcher);
    res.on('close', () => this.#watchers.delete(watcher));
    for (const event of this.#events) {
      if (event.rv > from && event.path === path && selector(event.object.metadata.labels) && !watcher.silenced) {
        this.#writeLine(watcher, JSON.stringify({ type: event.type, object: event.object }));
      }
    }
  }
}

function goneEvent() {
  return { type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'too old resource version', reason: 'Expired', code: 410 } };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function parseSelector(raw: string | undefined): (labels: Record<string, string> | undefined) => boolean {
  const terms = (raw ?? '').split(',').filter((t) => t !== '').map((t) => t.split('=') as [string, string]);
  return (labels) => terms.every(([k, v]) => labels?.[k] === v);
}
