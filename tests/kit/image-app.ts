/**
 * The router image's /app tree, made on this machine the way the root
 * Dockerfile makes it (no image can be built here): the sources the CLI
 * loads, without tests, and node_modules from `npm ci --omit=dev
 * --ignore-scripts`. The in-cluster validation mounts it at /app, so a
 * runtime import of a dev dependency or of a file the image leaves out fails
 * there as it would in the image.
 *
 * node_modules is cached by the lockfile's hash under
 * ${SWITCHYARD_CACHE:-~/.cache/switchyard}/image-app/; the sources are copied
 * fresh into a directory the caller removes.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
/** A .dockerignore exclusion pattern (globstar and star only) as a regular expression over a repository-relative path. */
function ignorePattern(pattern: string): RegExp {
  const body = pattern
    .split('**/')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*'))
    .join('(?:.*/)?');
  return new RegExp(`^${body}(?:/|$)`);
}

/**
 * What the Dockerfile's `sources` stage copies (its COPY lines), less what
 * .dockerignore keeps out of the build context (its exclusion lines after the
 * allow-list), both read from the files themselves so the two cannot drift.
 */
function dockerfileSources(): { sources: string[]; dropped: RegExp[] } {
  const text = readFileSync(join(REPO, 'Dockerfile'), 'utf8');
  const stage = /^FROM \S+ AS sources$([\s\S]*?)^FROM /m.exec(text)?.[1];
  if (stage === undefined) throw new Error('Dockerfile: no `sources` stage');
  const sources = [...stage.matchAll(/^COPY (\S+) \S+$/gm)].map((m) => m[1] as string);
  const ignoreLines = readFileSync(join(REPO, '.dockerignore'), 'utf8').split('\n').map((line) => line.trim());
  const dropped = ignoreLines.filter((line) => line !== '' && line !== '*' && !line.startsWith('#') && !line.startsWith('!')).map(ignorePattern);
  return { sources, dropped };
}

/** Copies the image's sources (the Dockerfile's `sources` stage) into `dir`. */
export function copyImageSources(dir: string): void {
  const { sources, dropped } = dockerfileSources();
  for (const source of sources) {
    cpSync(join(REPO, source), join(dir, source), {
      recursive: true,
      filter: (from) => {
        const path = relative(REPO, from);
        return !dropped.some((pattern) => pattern.test(path));
      },
    });
  }
}

/** An /app tree: `dir` holds the sources, `nodeModules` the production dependencies (mount it at dir/node_modules). */
export interface ImageApp {
  readonly dir: string;
  readonly nodeModules: string;
}

/** Production node_modules for the current lockfile, installed once and cached. */
export function productionNodeModules(): string {
  const lock = readFileSync(join(REPO, 'package-lock.json'));
  const key = createHash('sha256').update(lock).update(readFileSync(join(REPO, 'package.json'))).digest('hex').slice(0, 16);
  const cache = join(process.env['SWITCHYARD_CACHE'] ?? join(process.env['HOME'] ?? tmpdir(), '.cache', 'switchyard'), 'image-app', key);
  const out = join(cache, 'node_modules');
  if (existsSync(out)) return out;
  const work = mkdtempSync(join(tmpdir(), 'switchyard-image-deps-'));
  try {
    cpSync(join(REPO, 'package.json'), join(work, 'package.json'));
    cpSync(join(REPO, 'package-lock.json'), join(work, 'package-lock.json'));
    execFileSync('npm', ['ci', '--omit=dev', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: work, stdio: ['ignore', 'ignore', 'inherit'], timeout: 600_000 });
    mkdirSync(cache, { recursive: true });
    renameSync(join(work, 'node_modules'), out);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return out;
}

/** Copies the image's sources into a fresh directory (with an empty node_modules mount point). */
export function imageApp(): ImageApp {
  const nodeModules = productionNodeModules();
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-image-app-'));
  chmodSync(dir, 0o755); // the pod's non-root user reads it through a bind mount
  copyImageSources(dir);
  mkdirSync(join(dir, 'node_modules'));
  return { dir, nodeModules };
}
