/**
 * The process settings `switchyard serve` makes before it builds the router:
 * V8's collector tuned for a forwarding proxy, and V8's helper threads
 * behind the event loop (helper-thread-priority.ts). They tune Node, not the
 * router, so the benchmarks' bare forwarder makes them too: what switchyard
 * costs above that floor is then the router's own code.
 */
import { setFlagsFromString } from 'node:v8';
import { lowerHelperThreadPriority } from './helper-thread-priority.ts';

/** Makes both settings; returns the helper threads it lowered. */
export function tuneProcess(): number[] {
  tuneCollector();
  return lowerHelperThreadPriority();
}

/**
 * Two V8 collector settings, set first thing, before the heap grows and
 * before any request is served:
 *
 * - Large request bodies live outside the JavaScript heap (socket reads, the
 *   body buffer), and V8 by default starts a full collection each time such
 *   memory grows by a fixed step: with 200 KB prompts at ~1,000 a second the
 *   router ran ~11 mark-compacts a second over a 23 MB heap, and collection
 *   took 39% of its CPU (`--trace-gc`, ab -c 16). Counting that memory in the
 *   heap's own growing limits cut them to ~3 a second and the CPU per request
 *   from 685-827 to ~520 µs.
 * - Allocation-site pretenuring is off. Once requests had lived long for a
 *   while (a few seconds of queueing in the router), V8 began allocating the
 *   request path's objects straight into the old generation. A dead request
 *   there is only freed by a full collection, and until then it keeps every
 *   young object it points to (headers, buffers, the upstream request) alive
 *   through each young collection, so nearly everything was copied and
 *   promoted, which made the next decision to pretenure look right. The
 *   router stayed in that state for good: scavenges of ~21 ms promoting
 *   ~11 MB each at 3,500 requests a second, p99 71 ms against the engine's
 *   12; with pretenuring off, 2.0 ms scavenges and p99 6-12 ms, at no CPU
 *   cost measurable under ab (docs/performance.md, "The tail's second
 *   cause").
 */
function tuneCollector(): void {
  setFlagsFromString('--external-memory-accounted-in-global-limit');
  setFlagsFromString('--no-allocation-site-pretenuring');
}
