/**
 * The router image's source tree, made on this machine exactly as the Dockerfile's
 * `sources` stage and .dockerignore make it (no image can be built here): it holds
 * no test code, and every import in it resolves inside the tree or to a runtime
 * dependency. A product module that reached into tests/ or loadtest/scenarios/,
 * or a runtime import of a dev dependency, would break the image and fails here.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { copyImageSources, productionNodeModules } from '../kit/image-app.ts';
import { dockerfileImageConfig } from '../kit/image-registry.ts';

const REPO = new URL('../../', import.meta.url);

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)));
}

/** Every module specifier a TypeScript file names: static imports, re-exports and import() with a literal. */
function specifiers(source: string): string[] {
  const found = new Set<string>();
  for (const match of source.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'";]*?from\s+'([^']+)'/g)) found.add(match[1] as string);
  for (const match of source.matchAll(/(?:^|\n)\s*import\s+'([^']+)'/g)) found.add(match[1] as string);
  for (const match of source.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)) found.add(match[1] as string);
  return [...found];
}

/** The package a bare specifier names (`@scope/name/sub` → `@scope/name`). */
function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] as string);
}

describe('the router image source tree (Dockerfile sources stage + .dockerignore)', () => {
  let dir: string;
  let files: string[];
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-image-tree-'));
    copyImageSources(dir);
    files = filesUnder(dir);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('holds the CLI and the simulator it serves, and no test code', () => {
    assert.ok(files.includes('router/cli/bin.ts'), 'the entrypoint is in the tree');
    assert.ok(files.includes('loadtest/sim/server.ts'), '`switchyard sim` has its simulator');
    const testCode = files.filter((file) => /\.test\.ts$|\.(e2e|hardening|shared-state|k8s|chart|cluster|interop|dashboards)\.ts$/.test(file) || /^(tests|loadtest\/scenarios)\//.test(file) || /(^|\/)(e2e|test|test-support|fixtures)\//.test(file));
    assert.deepEqual(testCode, [], 'test code in the image');
  });

  it('resolves every import inside the tree or to a runtime dependency', () => {
    const manifest = JSON.parse(readFileSync(new URL('package.json', REPO), 'utf8')) as { dependencies: Record<string, string> };
    const runtime = new Set(Object.keys(manifest.dependencies));
    const builtins = new Set(builtinModules);
    const unresolved: string[] = [];
    for (const file of files.filter((name) => name.endsWith('.ts'))) {
      for (const specifier of specifiers(readFileSync(join(dir, file), 'utf8'))) {
        if (specifier.startsWith('.')) {
          if (!existsSync(resolve(dir, dirname(file), specifier))) unresolved.push(`${file}: ${specifier}`);
        } else if (!specifier.startsWith('node:') && !builtins.has(specifier) && !runtime.has(packageName(specifier))) {
          unresolved.push(`${file}: ${specifier} (not a runtime dependency)`);
        }
      }
    }
    assert.deepEqual(unresolved, []);
  });
});

describe('the router image entrypoint (Dockerfile ENTRYPOINT and CMD, run from the image tree)', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-image-run-'));
    copyImageSources(dir);
    symlinkSync(productionNodeModules(), join(dir, 'node_modules'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** What `docker run IMAGE ...args` runs, with the image's Node and /app mapped onto this machine's. */
  const dockerRun = (args: readonly string[]) => {
    const config = dockerfileImageConfig();
    const [node, ...rest] = config.entrypoint;
    assert.equal(node, '/nodejs/bin/node', 'the entrypoint starts with the image\'s Node (values image.node)');
    const argv = [...rest, ...(args.length > 0 ? args : config.cmd)].map((arg) => arg.replace(/^\/app\//, `${dir}/`));
    return promisify(execFile)(process.execPath, argv, { timeout: 60_000 });
  };

  it('is the switchyard CLI: `docker run IMAGE serve --help` and `docker run IMAGE sim --help` answer', async () => {
    assert.match((await dockerRun(['serve', '--help'])).stdout, /switchyard serve/);
    assert.match((await dockerRun(['sim', '--help'])).stdout, /switchyard sim/);
    assert.match((await dockerRun(['bench', 'load', '--help'])).stdout, /switchyard bench load/);
    assert.match((await dockerRun(['--version'])).stdout, /^switchyard \d+\.\d+\.\d+$/m);
  });

  it('runs `serve` with no arguments, as the chart does (the chart sets its own command with the heap flag)', () => {
    assert.deepEqual(dockerfileImageConfig().cmd, ['serve']);
    assert.ok(dockerfileImageConfig().entrypoint.some((arg) => arg.startsWith('--max-old-space-size=')), 'a heap bound when run without the chart');
  });
});
