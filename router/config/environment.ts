/**
 * Warnings for `SWITCHYARD_*` variables that set nothing. A misspelt
 * variable used to be ignored in silence, its setting left on the default.
 * Kubernetes also injects variables for every Service in the namespace
 * (service links: a Service named switchyard gives SWITCHYARD_PORT,
 * SWITCHYARD_SERVICE_HOST, SWITCHYARD_PORT_8080_TCP_ADDR, ...); those are
 * not settings and are passed over without a word (the chart also turns
 * service links off).
 */
import { closest } from './did-you-mean.ts';
import { OPTIONS } from './options.ts';

const PREFIX = 'SWITCHYARD_';

/** Variables read by switchyard besides the option table's. */
const OTHER_VARIABLES = ['SWITCHYARD_CONFIG'];

/**
 * Service-link variables of a Service whose name starts with "switchyard"
 * (`<NAME>_SERVICE_HOST`, `<NAME>_SERVICE_PORT[_<PORT NAME>]`, `<NAME>_PORT`,
 * `<NAME>_PORT_<N>_<PROTO>[_PROTO|_PORT|_ADDR]`).
 */
const SERVICE_LINK = /^SWITCHYARD(_[A-Z0-9_]+?)?_(SERVICE_(HOST|PORT(_[A-Z0-9_]+)?)|PORT(_\d+_(TCP|UDP|SCTP)(_(PROTO|PORT|ADDR))?)?)$/;

/** True for a variable the kubelet injects for a Service (never a setting). */
export function isServiceLink(name: string): boolean {
  return SERVICE_LINK.test(name);
}

/**
 * One warning per `SWITCHYARD_*` variable in `env` that switchyard does not
 * read, naming the nearest variable it does; file-only options (maps) are
 * named as such. Service-link variables get none.
 */
export function environmentWarnings(env: Readonly<Record<string, string | undefined>>): string[] {
  const settable = OPTIONS.filter((option) => !option.fileOnly).map((option) => option.env);
  const known = new Set([...settable, ...OTHER_VARIABLES]);
  const fileOnly = new Map(OPTIONS.filter((option) => option.fileOnly).map((option) => [option.env, option.path.join('.')]));
  const warnings: string[] = [];
  for (const name of Object.keys(env).sort()) {
    if (!name.startsWith(PREFIX) || known.has(name) || env[name] === undefined) continue;
    const section = fileOnly.get(name);
    if (section !== undefined) {
      warnings.push(`${name} is ignored: ${section} can only be set in the config file`);
      continue;
    }
    if (isServiceLink(name)) continue;
    const suggestion = closest(name.slice(PREFIX.length), [...known].map((known) => known.slice(PREFIX.length)));
    warnings.push(`${name} is not a switchyard setting and is ignored${suggestion === undefined ? '' : `; did you mean ${PREFIX}${suggestion}?`}`);
  }
  return warnings;
}
