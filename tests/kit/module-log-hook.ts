/**
 * Test support: preloaded with `node --import <this file's URL>?log=<path>`,
 * it appends the URL of every module the process (or a worker started with
 * the same node options) loads to `<path>`, one per line, before the module
 * runs, so a test can see a process's whole module graph without changing
 * the code under test. Synchronous hooks (`module.registerHooks`) see ES
 * modules and require() alike.
 */
import { appendFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const log = new URL(import.meta.url).searchParams.get('log');
if (log === null) throw new Error('module-log-hook: preload it as <url>?log=<path>');

registerHooks({
  load(url, context, nextLoad) {
    appendFileSync(log, `${url}\n`);
    return nextLoad(url, context);
  },
});
