/**
 * Test support: preloaded with `node --expose-gc --import <this file's URL>`,
 * it runs a full garbage collection whenever the process gets SIGUSR2, so a
 * test can read what a router process really holds (nodejs_heap_size_used_bytes
 * on its /metrics) rather than what it holds plus garbage not yet collected,
 * without changing the code under test.
 */
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('gc-on-signal: run node with --expose-gc');
process.on('SIGUSR2', () => gc());
