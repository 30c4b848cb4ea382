/**
 * The dashboard e2e test's load generator: open-loop (arrivals on a fixed
 * schedule, whatever the answers take), spread at random over the router
 * replicas the way a Service would, and keeping its own record of every
 * answer. The dashboard's panels are checked against these records, so they
 * are taken on the client side with wall-clock completion times that can be
 * compared with Prometheus' evaluation time.
 */
import { Agent, request } from 'node:http';
import { seededRng, type Rng } from '../../loadtest/sim/random.ts';

/** One stream of requests for one model within a phase. */
export interface LoadStream {
  readonly model: string;
  readonly ratePerS: number;
  /** Share of requests sent with `stream: true` (0-1). */
  readonly streamShare: number;
  /** Conversations the requests are spread over (`x-session-id`, growing message history); 0: none. */
  readonly sessions: number;
  /** Extra request headers (simulator knobs, the API key) for one request. */
  readonly headers: (random: Rng) => Record<string, string>;
  /** Copied to the stream's outcomes, so the checks can tell its answers apart (e.g. a quota-limited tenant). */
  readonly label?: string;
}

/** What the generator saw of one request. */
export interface Outcome {
  readonly model: string;
  readonly stream: boolean;
  /** HTTP status; 0 when the connection failed before one arrived. */
  readonly status: number;
  /** Seconds from sending to the first response body byte; undefined when none came. */
  readonly firstByteS: number | undefined;
  /** Seconds from sending to the end of the response. */
  readonly durationS: number;
  /** Unix seconds (wall clock) the response ended. */
  readonly doneAtS: number;
  /** The stream's label, if it has one. */
  readonly label?: string | undefined;
}

const SYSTEM_PROMPT = 'You are a helpful assistant for the switchyard dashboard test. '.repeat(8);
const MAX_TURNS = 6;

/** Sends the load and records the outcomes. */
export class LoadGenerator {
  readonly outcomes: Outcome[] = [];
  readonly #routers: readonly string[];
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 512 });
  readonly #random: Rng;
  readonly #open = new Set<Promise<void>>();
  readonly #turns = new Map<string, number>();
  #next = 0;

  /** `routers`: base URLs of the router replicas' traffic ports. */
  constructor(routers: readonly string[], seed = 7) {
    this.#routers = routers;
    this.#random = seededRng(seed);
  }

  /** Sends `streams` for `durationMs` (arrivals evenly spaced per stream); resolves when the last is sent. */
  async phase(streams: readonly LoadStream[], durationMs: number): Promise<void> {
    const start = performance.now();
    const arrivals = streams
      .flatMap((stream) => {
        const gapMs = 1000 / stream.ratePerS;
        const offset = this.#random() * gapMs;
        return Array.from({ length: Math.floor((durationMs - offset) / gapMs) + 1 }, (_, i) => ({ atMs: offset + i * gapMs, stream }));
      })
      .filter((a) => a.atMs < durationMs)
      .sort((a, b) => a.atMs - b.atMs);
    for (const arrival of arrivals) {
      const wait = start + arrival.atMs - performance.now();
      if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
      this.#send(arrival.stream);
    }
    const rest = start + durationMs - performance.now();
    if (rest > 1) await new Promise((resolve) => setTimeout(resolve, rest));
  }

  /** Resolves once every request sent so far has ended, then closes the connections. */
  async drain(): Promise<void> {
    while (this.#open.size > 0) await Promise.all([...this.#open]);
    this.#agent.destroy();
  }

  #send(stream: LoadStream): void {
    // A random replica per request, as a Service spreads connections: a strict rotation would
    // line up with the streams' fixed spacing and send one model's requests to one replica.
    const router = this.#routers[Math.floor(this.#random() * this.#routers.length)] as string;
    this.#next++;
    const streamed = this.#random() < stream.streamShare;
    const headers: Record<string, string> = { 'content-type': 'application/json', ...stream.headers(this.#random) };
    let messages: unknown[] = [{ role: 'system', content: `${SYSTEM_PROMPT} Model ${stream.model}.` }];
    if (stream.sessions > 0) {
      const session = `${stream.model}-conv-${Math.floor(this.#random() * stream.sessions)}`;
      const turn = ((this.#turns.get(session) ?? 0) % MAX_TURNS) + 1;
      this.#turns.set(session, turn);
      headers['x-session-id'] = session;
      for (let t = 1; t < turn; t++) messages.push({ role: 'user', content: `${session} question ${t}` }, { role: 'assistant', content: `answer ${t}` });
      messages.push({ role: 'user', content: `${session} question ${turn}` });
    } else {
      messages = [...messages, { role: 'user', content: `one-shot ${this.#next}` }];
    }
    const body = JSON.stringify({ model: stream.model, messages, stream: streamed, max_tokens: 8 });
    const sent = this.#exchange(router, headers, body).then((result) => {
      this.outcomes.push({ model: stream.model, stream: streamed, label: stream.label, ...result });
    });
    this.#open.add(sent);
    void sent.finally(() => this.#open.delete(sent));
  }

  #exchange(router: string, headers: Record<string, string>, body: string): Promise<Omit<Outcome, 'model' | 'stream' | 'label'>> {
    const startedAt = performance.now();
    return new Promise((resolve) => {
      let firstByteAt: number | undefined;
      const done = (status: number) =>
        resolve({
          status,
          firstByteS: firstByteAt === undefined ? undefined : (firstByteAt - startedAt) / 1000,
          durationS: (performance.now() - startedAt) / 1000,
          doneAtS: Date.now() / 1000,
        });
      const req = request(`${router}/v1/chat/completions`, { method: 'POST', agent: this.#agent, headers }, (res) => {
        res.on('data', () => (firstByteAt ??= performance.now()));
        res.on('end', () => done(res.statusCode ?? 0));
        res.on('error', () => done(res.statusCode ?? 0));
      });
      req.on('error', () => done(0));
      req.end(body);
    });
  }
}
