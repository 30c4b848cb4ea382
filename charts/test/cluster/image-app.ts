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

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
/**
 * What the Dockerfile's `sources` stage copies (its COPY lines) and deletes
 * again (its `rm -rf` and the *.test.ts find), read from the Dockerfile so
 * the two cannot drift.
 */
function dockerfileSources(): { sources: string[]; dropped: RegExp[] } {
  const text = readFileSync(join(REPO, 'Dockerfile'), 'utf8');
  const stage = /^FROM \S+ AS sources$([\s\S]*?)^FROM /m.exec(text)?.[1];
  if (stage === undefined) throw new Error('Dockerfile: no `sources` stage');
  const sources = [...stage.matchAll(/^COPY (\S+) \S+$/gm)].map((m) => m[1] as string);
  const removed = /rm -rf ([^\n]+)/.exec(stage)?.[1]?.trim().split(/\s+/) ?? [];
  if (!stage.includes("find . -name '*.test.ts' -delete")) throw new Error('Dockerfile: the sources stage no longer drops *.test.ts; update image-app.ts');
  const escape = (path: string) => path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return { sources, dropped: [/\.test\.ts$/, ...removed.map((path) => new RegExp(`^${escape(path)}(/|$)`))] };
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
  mkdirSync(join(dir, 'node_modules'));
  return { dir, nodeModules };
}
