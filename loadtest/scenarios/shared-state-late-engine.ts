/**
 * The engine that joins mid-run: its URL is listed to the routers from the
 * start (a static backend whose models are not known yet, so it is not
 * routable), and its simulator only starts listening at the join. The
 * routers' model probe retries it and adds it within one retry interval,
 * the way a scaled-out pod appears. Each run gets a fresh simulator on the
 * same reserved port, so its session records start empty.
 */
import { freePorts } from '../../tests/kit/free-ports.ts';
import { EngineSimulator } from '../sim/server.ts';
import type { EngineSpec } from './fleet.ts';

export class LateEngine {
  readonly url: string;
  readonly #port: number;
  readonly #model: string;
  readonly #spec: EngineSpec;
  #engine: EngineSimulator | undefined;

  private constructor(port: number, model: string, spec: EngineSpec) {
    this.#port = port;
    this.#model = model;
    this.#spec = spec;
    this.url = `http://127.0.0.1:${port}`;
  }

  /** Reserves a loopback port (free now; nothing else in the run binds ports by number). */
  static async reserve(model: string, spec: EngineSpec): Promise<LateEngine> {
    const [port] = (await freePorts(1)) as [number];
    return new LateEngine(port, model, spec);
  }

  /** The simulator of the current run, once it joined. */
  get engine(): EngineSimulator | undefined {
    return this.#engine;
  }

  /** Starts a fresh simulator listening on the reserved port. */
  async join(): Promise<EngineSimulator> {
    await this.leave();
    const { maxSeqs, ttftMs, itlMs, outputTokens } = this.#spec;
    const engine = new EngineSimulator({ model: this.#model, seed: 5, knobs: { maxSeqs, ttftMs, itlMs, outputTokens } });
    await engine.listen('127.0.0.1', this.#port);
    this.#engine = engine;
    return engine;
  }

  /** Stops the current simulator, if any (destroying open connections). */
  async leave(): Promise<void> {
    const engine = this.#engine;
    this.#engine = undefined;
    await engine?.close();
  }
}
