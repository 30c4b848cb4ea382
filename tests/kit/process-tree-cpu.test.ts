import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { coresBetween, cpuMsAt, runMeasured } from './process-tree-cpu.ts';

describe('process-tree-cpu', () => {
  it('interpolates the CPU between readings and clamps outside them', () => {
    const samples = [
      { atMs: 1_000, cpuMs: 100 },
      { atMs: 2_000, cpuMs: 600 },
      { atMs: 3_000, cpuMs: 700 },
    ];
    assert.equal(cpuMsAt(samples, 500), 100);
    assert.equal(cpuMsAt(samples, 1_500), 350);
    assert.equal(cpuMsAt(samples, 3_500), 700);
    assert.equal(coresBetween(samples, 1_000, 2_000), 0.5);
    assert.equal(coresBetween(samples, 1_000, 3_000), 0.3);
  });

  it("counts a grandchild's CPU once it exits, and the command's exit code", async () => {
    // The grandchild spends at least 300 ms of CPU (process time, not wall time) and exits; its parent then exits 3.
    const child = 'import time\nwhile time.process_time() < 0.3: pass';
    const parent = `import subprocess, sys\nsubprocess.run([sys.executable, '-c', ${JSON.stringify(child)}], check=True)\nsys.exit(3)`;
    const run = await runMeasured('python3', ['-c', parent], { timeoutMs: 60_000 });
    assert.equal(run.code, 3);
    assert.ok(run.cpuMs >= 300, `tree CPU ${run.cpuMs} ms`);
    assert.equal(run.samples.at(-1)?.cpuMs, run.cpuMs, 'the exact total closes the readings');
  });
});
