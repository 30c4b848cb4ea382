import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { startRouterProcess } from '../../tests/kit/harness.ts';
import { HELPER_NICE_OFFSET, lowerHelperThreadPriority } from './helper-thread-priority.ts';

/** Name and nice value of every thread of process `pid`, from /proc. */
function threadsOf(pid: number): { tid: number; name: string; nice: number }[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    // The fields after the name in parentheses; nice is field 19 of stat(5).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { tid: Number(tid), name: readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim(), nice: Number(fields[16]) };
  });
}

describe('lowerHelperThreadPriority', { skip: process.platform !== 'linux' && 'per-thread priorities are read from /proc' }, () => {
  it("switchyard serve runs V8's helper threads 10 nice steps below the event loop and everything else as it was started", async () => {
    // The router inherits this process's nice value (CI may run niced); below 19, or the test could not tell.
    const inherited = getPriority();
    assert.ok(inherited < 19, 'run the tests below nice 19');
    const expected = Math.min(19, inherited + HELPER_NICE_OFFSET);
    const router = await startRouterProcess(['--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--backend', 'http://127.0.0.1:9']);
    try {
      const pid = router.child.pid as number;
      const threads = threadsOf(pid);
      const helpers = threads.filter((t) => t.name === 'V8Worker');
      assert.ok(helpers.length > 0, `a Node process has V8 helper threads: ${JSON.stringify(threads)}`);
      for (const helper of helpers) assert.equal(helper.nice, expected, `helper ${helper.tid}`);
      assert.equal(threads.find((t) => t.tid === pid)?.nice, inherited, 'the event loop keeps its priority');
      for (const other of threads.filter((t) => t.name !== 'V8Worker')) assert.equal(other.nice, inherited, `${other.name} ${other.tid} keeps its priority`);
    } finally {
      router.child.kill('SIGTERM');
      await router.exit;
    }
  });

  it('lowers the helpers it can and skips threads it may not change or that ended', () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-tasks-'));
    try {
      const thread = (tid: number, name?: string) => {
        mkdirSync(join(dir, String(tid)));
        if (name !== undefined) writeFileSync(join(dir, String(tid), 'comm'), `${name}\n`);
      };
      thread(100, 'node');
      thread(101, 'V8Worker');
      thread(102, 'V8Worker');
      thread(103); // ended: no comm left to read
      thread(104, 'libuv-worker');
      const calls: number[] = [];
      const lowered = lowerHelperThreadPriority({
        taskDir: dir,
        eventLoopNice: () => 0,
        setPriority: (tid, nice) => {
          assert.equal(nice, HELPER_NICE_OFFSET);
          calls.push(tid);
          if (tid === 102) throw new Error('EPERM');
        },
      });
      assert.deepEqual(calls.sort(), [101, 102]);
      assert.deepEqual(lowered, [101]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps the gap for a router started niced, up to the lowest priority there is', () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-tasks-'));
    try {
      mkdirSync(join(dir, '201'));
      writeFileSync(join(dir, '201', 'comm'), 'V8Worker\n');
      for (const [loop, helper] of [[3, 13], [9, 19], [15, 19]] as const) {
        const set: number[] = [];
        lowerHelperThreadPriority({ taskDir: dir, eventLoopNice: () => loop, setPriority: (_tid, nice) => set.push(nice) });
        assert.deepEqual(set, [helper], `event loop at nice ${loop}`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('does nothing where threads cannot be listed', () => {
    assert.deepEqual(lowerHelperThreadPriority({ taskDir: '/nonexistent/task', eventLoopNice: () => 0, setPriority: () => assert.fail('nothing to lower') }), []);
  });
});
