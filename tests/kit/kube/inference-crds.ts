/**
 * The Gateway API Inference Extension's CRDs, installed into the test kit's
 * real kube-apiserver (./cluster.ts) for discovery of kind inferencepool.
 *
 * Why the upstream manifests and not a hand-written CRD: the router must
 * accept what the API server admits, and a CRD written here would only admit
 * what we believe an InferencePool looks like. The manifests (their OpenAPI
 * schemas and CEL rules) come from the Go module at a pinned version, through
 * the Go module proxy, cached by version outside the repo; nothing is vendored.
 *
 * Why installation waits twice: a CRD reports Established=True before every
 * apiserver handler and the discovery documents know its resources, so for a
 * moment its collection still answers 404. A test that creates an object right
 * after Established fails now and then; waiting for the collection's 200 too
 * makes the first write succeed.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import type { Cluster } from './cluster.ts';

const run = promisify(execFile);

/** The Gateway API Inference Extension release whose CRDs the tests install. */
export const INFERENCE_EXTENSION_VERSION = 'v1.3.0';
const MODULE = 'sigs.k8s.io/gateway-api-inference-extension';

/** File names of the CRDs in the module's config/crd/bases (pass them to {@link installInferenceCrds}). */
export const CRD_FILES = {
  /** InferencePool, inference.networking.k8s.io/v1: the version the router supports. */
  pool: 'inference.networking.k8s.io_inferencepools.yaml',
  /** InferencePool, inference.networking.x-k8s.io/v1alpha2: the old version, reported as unsupported. */
  oldPool: 'inference.networking.x-k8s.io_inferencepools.yaml',
  /** InferenceObjective, inference.networking.x-k8s.io/v1alpha2. */
  objective: 'inference.networking.x-k8s.io_inferenceobjectives.yaml',
  /** InferenceModelRewrite, inference.networking.x-k8s.io/v1alpha2. */
  rewrite: 'inference.networking.x-k8s.io_inferencemodelrewrites.yaml',
} as const;

/** How long one CRD may take to be established and served, and how often to look (ms). */
const ESTABLISH_TIMEOUT_MS = 30_000;
const POLL_MS = 50;

const MODULE_FILES = fileURLToPath(new URL('../../../charts/tools/module-files.sh', import.meta.url));
let crdDir: Promise<string> | undefined;

/**
 * A directory holding {@link CRD_FILES} at {@link INFERENCE_EXTENSION_VERSION}:
 * charts/tools/module-files.sh fetches them from the module's zip through the
 * Go module proxy once and caches them by version outside the repo, as it
 * does for the chart's CRDs. Resolved once per process; rejects when go is
 * missing and nothing is cached, or the download fails.
 */
export function inferenceCrdDir(): Promise<string> {
  crdDir ??= run('bash', [MODULE_FILES, MODULE, INFERENCE_EXTENSION_VERSION, 'config/crd/bases', ...Object.values(CRD_FILES)], { timeout: 10 * 60_000 }).then(({ stdout }) => {
    const dir = /^DIR=(.+)$/m.exec(stdout)?.[1];
    if (dir === undefined) throw new Error(`module-files.sh named no directory: ${stdout}`);
    return dir;
  });
  return crdDir;
}

/** The parts of a CustomResourceDefinition read here. */
interface Crd {
  metadata: { name: string };
  spec: { group: string; names: { plural: string }; versions: { name: string; served: boolean }[] };
}

/**
 * Creates the CRDs in `files` (names from {@link CRD_FILES}, or absolute
 * paths) as cluster admin, then resolves once each is Established and every
 * served version's collection (e.g. /apis/inference.networking.k8s.io/v1/inferencepools)
 * answers 200. Rejects when a CRD already exists or is refused, or when one
 * of those waits passes 30 s (polled every 50 ms).
 */
export async function installInferenceCrds(cluster: Cluster, files: readonly string[]): Promise<void> {
  const dir = await inferenceCrdDir();
  const crds: Crd[] = [];
  for (const file of files) {
    for (const doc of parseAllDocuments(readFileSync(resolve(dir, file), 'utf8'))) {
      const crd = doc.toJS() as Crd | null;
      if (crd === null) continue;
      await cluster.must('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
      crds.push(crd);
    }
  }
  for (const crd of crds) {
    await until(`${crd.metadata.name} Established`, async () => {
      const answer = await cluster.admin('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`);
      const conditions = (answer.body as { status?: { conditions?: { type: string; status: string }[] } }).status?.conditions ?? [];
      return conditions.some((c) => c.type === 'Established' && c.status === 'True') ? null : `${answer.status} ${JSON.stringify(conditions)}`;
    });
    for (const version of crd.spec.versions.filter((v) => v.served)) {
      const path = `/apis/${crd.spec.group}/${version.name}/${crd.spec.names.plural}`;
      await until(`GET ${path} answering 200`, async () => {
        const answer = await cluster.admin('GET', path);
        return answer.status === 200 ? null : `${answer.status} ${JSON.stringify(answer.body)}`;
      });
    }
  }
}

/** Polls `check` (null: done; else the state seen) until done, or rejects with the last state seen. */
async function until(what: string, check: () => Promise<string | null>): Promise<void> {
  const deadline = performance.now() + ESTABLISH_TIMEOUT_MS;
  for (;;) {
    const seen = await check();
    if (seen === null) return;
    if (performance.now() > deadline) throw new Error(`timed out after ${ESTABLISH_TIMEOUT_MS} ms waiting for ${what}; last: ${seen}`);
    await delay(POLL_MS);
  }
}
