/**
 * The release, short of GitHub: the workflow passes actionlint (v1.7.12, built from the Go module
 * proxy and cached), and its scripts run here against a copy of the tree. versions.sh refuses a
 * tag that disagrees with package.json, the chart's appVersion or the changelog; package-chart.sh
 * packages the chart with the release's image as its default (helm reads it back, README
 * included); notes.sh writes the changelog section and every digest. The README, the install
 * guide and the chart name the same image and install command.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { CHART, helm, helmBinary } from '../kit/helm/helm.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const RELEASE = join(REPO, '.github/release');
const WORKFLOW = join(REPO, '.github/workflows/release.yml');

/** Outcome of one script run; never rejects on a non-zero exit. */
async function script(name: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)('bash', [join(RELEASE, name), ...args], { env: { ...process.env, ...env }, timeout: 120_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const failed = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : 1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

/** Path of the actionlint binary, built (or found cached) by its build script. */
function actionlintBinary(): string {
  const out = execFileSync('bash', [join(REPO, 'tests/kit/actionlint/build.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 20 * 60_000 });
  const path = /^ACTIONLINT=(.+)$/m.exec(out)?.[1];
  if (path === undefined) throw new Error(`actionlint build.sh printed no ACTIONLINT= line: ${out}`);
  return path;
}

const keyValues = (text: string) => Object.fromEntries(text.trim().split('\n').map((line) => line.split(/=(.*)/s).slice(0, 2) as [string, string]));

const PACKAGE_VERSION = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
const CHART_VERSION = /^version: (.+)$/m.exec(readFileSync(join(CHART, 'Chart.yaml'), 'utf8'))?.[1] as string;

describe('the release workflow', () => {
  it('passes actionlint, which has teeth (a misspelt action input fails it)', async () => {
    const actionlint = actionlintBinary();
    const ok = await promisify(execFile)(actionlint, ['-no-color', WORKFLOW]).then(
      () => ({ code: 0, out: '' }),
      (err: { code: number; stdout: string }) => ({ code: err.code, out: err.stdout }),
    );
    assert.equal(ok.code, 0, ok.out);
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-actionlint-'));
    try {
      const broken = join(dir, 'release.yml');
      writeFileSync(broken, readFileSync(WORKFLOW, 'utf8').replace('platforms: linux/amd64,linux/arm64', 'platform: linux/amd64,linux/arm64'));
      const failed = await promisify(execFile)(actionlint, ['-no-color', broken]).then(
        () => ({ code: 0, out: '' }),
        (err: { code: number; stdout: string }) => ({ code: err.code, out: err.stdout }),
      );
      assert.notEqual(failed.code, 0);
      assert.match(failed.out, /platform/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the release scripts, on a copy of the tree', () => {
  let root: string;
  /** A tree whose package.json, Chart.yaml and changelog say `version` (the changelog section with or without upgrade notes). */
  const tree = (version: string, options: { appVersion?: string; upgradeNotes?: boolean } = {}) => {
    rmSync(root, { recursive: true, force: true });
    mkdirSync(root, { recursive: true });
    writeFileSync(join(root, 'package.json'), readFileSync(join(REPO, 'package.json'), 'utf8').replace(/^ {2}"version": ".*",$/m, `  "version": "${version}",`));
    cpSync(CHART, join(root, 'charts/switchyard'), { recursive: true });
    const chartYaml = join(root, 'charts/switchyard/Chart.yaml');
    writeFileSync(chartYaml, readFileSync(chartYaml, 'utf8').replace(/^appVersion: .*$/m, `appVersion: "${options.appVersion ?? version}"`));
    const notes = options.upgradeNotes === false ? '' : '### Upgrade notes\n\n- `auto` now routes keyless requests by prefix.\n\n';
    writeFileSync(join(root, 'CHANGELOG.md'), `# Changelog\n\n## Unreleased\n\n## ${version} - 2026-12-06\n\n${notes}### Routing\n\n- Prefix affinity.\n\n## 0.0.1 - 2026-01-01\n\n### Upgrade notes\n\nNone.\n`);
  };
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'switchyard-release-'));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('versions.sh: names the image and chart registry after the repository owner (lower-cased) when tag, package, chart and changelog agree', async () => {
    tree('1.4.0');
    const run = await script('versions.sh', ['v1.4.0', 'My-Org'], { RELEASE_ROOT: root });
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(keyValues(run.stdout), { version: '1.4.0', chart_version: CHART_VERSION, image: 'ghcr.io/my-org/switchyard', chart_registry: 'oci://ghcr.io/my-org/charts' });
  });

  it('versions.sh: refuses a tag that disagrees, with the file to fix', async () => {
    tree('1.4.0');
    const wrongPackage = await script('versions.sh', ['v1.5.0', 'o'], { RELEASE_ROOT: root });
    assert.notEqual(wrongPackage.code, 0);
    assert.match(wrongPackage.stderr, /package\.json says 1\.4\.0, the tag v1\.5\.0/);
    tree('1.4.0', { appVersion: '1.3.0' });
    const wrongApp = await script('versions.sh', ['v1.4.0', 'o'], { RELEASE_ROOT: root });
    assert.match(wrongApp.stderr, /appVersion says 1\.3\.0/);
    tree('1.4.0', { upgradeNotes: false });
    const noNotes = await script('versions.sh', ['v1.4.0', 'o'], { RELEASE_ROOT: root });
    assert.match(noNotes.stderr, /no '### Upgrade notes'/);
    const notSemver = await script('versions.sh', ['release-1', 'o'], { RELEASE_ROOT: root });
    assert.match(notSemver.stderr, /not v<semver>/);
  });

  it('notes.sh: the changelog section (upgrade notes first), the install command and every digest', async () => {
    tree('1.4.0');
    const digest = (c: string) => `sha256:${c.repeat(64)}`;
    const run = await script('notes.sh', [], {
      RELEASE_ROOT: root,
      VERSION: '1.4.0',
      CHART_VERSION: '2.1.0',
      IMAGE: 'ghcr.io/o/switchyard',
      IMAGE_DIGEST: digest('a'),
      NODE_IMAGE: `node:24-bookworm-slim@${digest('b')}`,
      RUNTIME_IMAGE: `gcr.io/distroless/nodejs24-debian12:nonroot@${digest('c')}`,
      CHART_REGISTRY: 'oci://ghcr.io/o/charts',
      CHART_DIGEST: digest('d'),
    });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^### Upgrade notes\n\n- `auto` now routes keyless requests by prefix\./m);
    assert.doesNotMatch(run.stdout, /0\.0\.1|None\./, 'only its own section');
    assert.match(run.stdout, /helm upgrade --install switchyard oci:\/\/ghcr\.io\/o\/charts\/switchyard --version 2\.1\.0/);
    for (const c of ['a', 'b', 'c', 'd']) assert.ok(run.stdout.includes(digest(c)), `digest ${c} recorded`);
  });

  it("package-chart.sh: the packaged chart's default image is the release's, its README shows, and it installs by appVersion", async () => {
    tree(PACKAGE_VERSION);
    const out = join(root, 'dist');
    const run = await script('package-chart.sh', ['ghcr.io/my-org/switchyard', out, helmBinary()], { RELEASE_ROOT: root });
    assert.equal(run.code, 0, run.stderr);
    const packaged = run.stdout.trim();
    assert.equal(packaged, join(out, `switchyard-${CHART_VERSION}.tgz`));
    const values = await helm(['show', 'values', packaged]);
    assert.match(values.stdout, /^ {2}repository: ghcr\.io\/my-org\/switchyard$/m);
    const readme = await helm(['show', 'readme', packaged]);
    assert.match(readme.stdout, /^# switchyard/m, '`helm show readme` is the chart README');
    const rendered = await helm(['template', 'r', packaged, '--set', 'config.backends[0]=http://e:8000']);
    assert.equal(rendered.code, 0, rendered.stderr);
    assert.match(rendered.stdout, new RegExp(`image: "?ghcr\\.io/my-org/switchyard:${PACKAGE_VERSION.replaceAll('.', '\\.')}"?`));
    const refused = await script('package-chart.sh', ['ghcr.io/My Org/switchyard', out, helmBinary()], { RELEASE_ROOT: root });
    assert.notEqual(refused.code, 0);
  });
});

describe('one install path in every document', () => {
  const command = `helm install switchyard oci://ghcr.io/switchyard/charts/switchyard --version ${CHART_VERSION}`;
  it(`the README, docs/install.md and the chart README give \`${command}\`, and the chart's default image is ghcr.io/switchyard/switchyard`, () => {
    for (const doc of ['README.md', 'docs/install.md', 'charts/switchyard/README.md']) {
      const text = readFileSync(join(REPO, doc), 'utf8').replace(/\s*\\\n\s*/g, ' ').replace(/\s+/g, ' ');
      assert.ok(text.includes(command), `${doc} gives the install command`);
      assert.match(text, /first tagged release/, `${doc} says the first tagged release publishes it`);
    }
    assert.match(readFileSync(join(CHART, 'values.yaml'), 'utf8'), /^ {2}repository: ghcr\.io\/switchyard\/switchyard$/m);
  });
});
