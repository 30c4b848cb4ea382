import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { HELPER_NICE, lowerHelperThreadPriority } from './helper-thread-priority.ts';

/** Thread name and nice value of every thread of a fresh Node process after it lowered its helpers. */
interface ChildThreads {
  readonly pid: number;
  readonly lowered: number[];
  readonly threads: { tid: number; name: string; nice: number }[];
}

function threadsOfChild(): ChildThreads {
  const script = `
    import { readdirSync, readFileSync } from 'node:fs';
    import { lowerHelperThreadPriority } from ${JSON.stringify(new URL('./helper-thread-priority.ts', import.meta.url).href)};
    const lowered = lowerHelperThreadPriority();
    const threads = readdirSync('/proc/self/task').map((tid) => {
      const stat = readFileSync('/proc/self/task/' + tid + '/stat', 'utf8');
      // Fields after the name in parentheses; nice is field 19 of stat(5).
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return { tid: Number(tid), name: readFileSync('/proc/self/task/' + tid + '/comm', 'utf8').trim(), nice: Number(fields[16]) };
    });
    console.log(JSON.stringify({ pid: process.pid, lowered, threads }));
  `;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(child.status, 0, child.stderr);
  return JSON.parse(child.stdout) as ChildThreads;
}

describe('lowerHelperThreadPriority', { skip: process.platform !== 'linux' && 'per-thread priorities are read from /proc' }, () => {
  it("gives V8's helper threads nice 19 and leaves the event loop and other threads as they were", () => {
    const { pid, lowered, threads } = threadsOfChild();
    const helpers = threads.filter((t) => t.name === 'V8Worker');
    assert.ok(helpers.length > 0, `a Node process has V8 helper threads: ${JSON.stringify(threads)}`);
    assert.deepEqual([...lowered].sort(), helpers.map((t) => t.tid).sort());
    for (const helper of helpers) assert.equal(helper.nice, HELPER_NICE, `helper ${helper.tid}`);
    // The child inherits this process's nice value (CI may run niced).
    const inherited = getPriority();
    assert.equal(threads.find((t) => t.tid === pid)?.nice, inherited, 'the event loop keeps its priority');
    for (const other of threads.filter((t) => t.name !== 'V8Worker')) assert.equal(other.nice, inherited, `${other.name} ${other.tid} keeps its priority`);
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
        setPriority: (tid, nice) => {
          assert.equal(nice, HELPER_NICE);
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

  it('does nothing where threads cannot be listed', () => {
    assert.deepEqual(lowerHelperThreadPriority({ taskDir: '/nonexistent/task', setPriority: () => assert.fail('nothing to lower') }), []);
  });
});
