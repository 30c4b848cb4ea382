/**
 * Watches the replicas' shared-state gauges through a run (every 100 ms, on
 * their admin ports, which are never shed) and answers how long after a
 * recovery every replica was up and agreed on the fleet again, and whether
 * that agreement held.
 */
import type { System } from './systems.ts';
import { fleetAgrees } from './shared-state-prom.ts';
import { readViews } from './shared-state-rig.ts';

/** One reading of every replica. */
export interface FleetSample {
  /** ms since the watch started. */
  readonly atMs: number;
  /** Replicas reporting `switchyard_shared_state_up` 1. */
  readonly up: number;
  /** Smallest `switchyard_fleet_replicas` any replica reported; NaN when none exports it. */
  readonly minFleet: number;
  /** Every replica up and seeing the whole fleet. */
  readonly agrees: boolean;
}

/** How long after a recovery the fleet agreed again (ms from the event). */
export interface Convergence {
  /** The first agreeing sample; undefined when none came in the window. */
  readonly firstMs: number | undefined;
  /**
   * The start of the agreement that held to the end of the window (a fleet
   * that agreed, fell apart again and came back settled only the second
   * time); undefined when the window ended without agreement.
   */
  readonly settledMs: number | undefined;
}

/** Convergence after `eventAtMs`, judged on the samples before `untilMs` (the next event, or the end of the run). */
export function convergence(samples: readonly FleetSample[], eventAtMs: number, untilMs: number): Convergence {
  const window = samples.filter((s) => s.atMs >= eventAtMs && s.atMs < untilMs);
  const first = window.find((s) => s.agrees);
  let settled: FleetSample | undefined;
  for (const sample of window) settled = sample.agrees ? (settled ?? sample) : undefined;
  return { firstMs: first === undefined ? undefined : first.atMs - eventAtMs, settledMs: settled === undefined ? undefined : settled.atMs - eventAtMs };
}

/** Polls the replicas until stopped; one reading at a time (a slow scrape delays the next, never piles up). */
export class FleetWatch {
  readonly #samples: FleetSample[] = [];
  readonly #started = performance.now();
  #stopped = false;
  readonly #loop: Promise<void>;

  constructor(routers: readonly System[], periodMs = 100) {
    this.#loop = (async () => {
      while (!this.#stopped) {
        const views = await readViews(routers);
        const fleets = views.flatMap((v) => (v.fleetReplicas === undefined ? [] : [v.fleetReplicas]));
        this.#samples.push({
          atMs: performance.now() - this.#started,
          up: views.filter((v) => v.up === 1).length,
          minFleet: fleets.length === 0 ? Number.NaN : Math.min(...fleets),
          agrees: fleetAgrees(views, routers.length),
        });
        await new Promise((resolve) => setTimeout(resolve, periodMs));
      }
    })();
  }

  /** ms since the watch started, on the clock the samples use. */
  now(): number {
    return performance.now() - this.#started;
  }

  /** Stops polling and returns the samples. */
  async stop(): Promise<FleetSample[]> {
    this.#stopped = true;
    await this.#loop;
    return this.#samples;
  }
}
