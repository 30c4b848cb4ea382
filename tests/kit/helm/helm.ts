/**
 * Runs the helm CLI that tests/kit/helm/build.sh builds from source (and
 * caches by version) against charts/switchyard, and parses what it renders.
 * Shared by the chart tests and the in-cluster validation.
 */
import { execFile, execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';

const run = promisify(execFile);

/** The chart's folder. */
export const CHART = fileURLToPath(new URL('../../../charts/switchyard', import.meta.url));
/** The values matrix helm lint and template run over. */
export const CI_VALUES_DIR = `${CHART}/ci`;
const BUILD_SH = fileURLToPath(new URL('./build.sh', import.meta.url));
/** Kubernetes version helm renders and lints for (the version the in-cluster validation runs). */
export const KUBE_VERSION = '1.37.2';

let helmPath: string | undefined;

/** Path of the helm binary, built (or found cached) on first use. */
export function helmBinary(): string {
  if (helmPath !== undefined) return helmPath;
  const out = execFileSync('bash', [BUILD_SH], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 20 * 60_000 });
  const path = /^HELM=(.+)$/m.exec(out)?.[1];
  if (path === undefined) throw new Error(`build.sh printed no HELM= line: ${out}`);
  helmPath = path;
  return path;
}

/** The values files of the CI matrix, as absolute paths. */
export function ciValuesFiles(): string[] {
  return readdirSync(CI_VALUES_DIR)
    .filter((name) => name.endsWith('-values.yaml'))
    .sort()
    .map((name) => `${CI_VALUES_DIR}/${name}`);
}

/** Outcome of one helm command. */
export interface HelmRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs helm with `args`; never rejects on a non-zero exit. */
export async function helm(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<HelmRun> {
  try {
    const { stdout, stderr } = await run(helmBinary(), args, { maxBuffer: 64 * 1024 * 1024, env: { ...process.env, ...helmEnv(), ...env }, timeout: 300_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const failed = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : 1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? String(err) };
  }
}

/** Keeps helm's own state (repositories, cache, plugins) out of the user's home. */
function helmEnv(): NodeJS.ProcessEnv {
  const base = `${process.env['SWITCHYARD_CACHE'] ?? `${process.env['HOME'] ?? '/tmp'}/.cache/switchyard`}/helm/home`;
  return { HELM_CACHE_HOME: `${base}/cache`, HELM_CONFIG_HOME: `${base}/config`, HELM_DATA_HOME: `${base}/data` };
}

/** A rendered Kubernetes object. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: unknown;
}

/** Options of {@link template}. */
export interface TemplateOptions {
  readonly release?: string;
  readonly namespace?: string;
  readonly valuesFiles?: readonly string[];
  /** `--set-json` pairs, e.g. `['config.backends=["http://a:1"]']`. */
  readonly setJson?: readonly string[];
}

/** `helm template` arguments for `options`. */
export function templateArgs(options: TemplateOptions = {}): string[] {
  const args = ['template', options.release ?? 'sy', CHART, '--namespace', options.namespace ?? 'switchyard', '--kube-version', KUBE_VERSION];
  for (const file of options.valuesFiles ?? []) args.push('--values', file);
  for (const pair of options.setJson ?? []) args.push('--set-json', pair);
  return args;
}

/** Renders the chart (hooks included, as `helm template` does) and parses every object. */
export async function template(options: TemplateOptions = {}): Promise<K8sObject[]> {
  const result = await helm(templateArgs(options));
  if (result.code !== 0) throw new Error(`helm template failed (${result.code}): ${result.stderr}`);
  return parseObjects(result.stdout);
}

/** The objects of a multi-document YAML stream (empty documents skipped). */
export function parseObjects(text: string): K8sObject[] {
  const objects: K8sObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new Error(`rendered YAML does not parse: ${doc.errors[0]?.message}`);
    const value = doc.toJS() as K8sObject | null;
    if (value !== null) objects.push(value);
  }
  return objects;
}

/** The one object of `kind` (and `name` when given); throws when there is not exactly one. */
export function only(objects: readonly K8sObject[], kind: string, name?: string): K8sObject {
  const found = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  if (found.length !== 1) throw new Error(`expected one ${kind}${name === undefined ? '' : ` ${name}`}, found ${found.length}`);
  return found[0] as K8sObject;
}
