/**
 * Background work (a timer's publish round, a fire-and-forget write) has no
 * caller to hand a failure to: a throw inside a `setInterval`'d promise is
 * an unhandled rejection, and one unhandled rejection used to end the
 * process. So every background task of the shared state runs through
 * {@link runTask}, which catches whatever it throws or rejects with and
 * tells the reporter (compose.ts logs it without bodies or secrets and counts
 * it in `switchyard_background_failures_total{task}`). The task's next run
 * goes ahead as scheduled.
 */
import type { BackgroundTask } from '../metrics/label-values.ts';

/** Told of one failed run of a background task; must not throw. `task` is a short fixed name (a metric label). */
export type TaskFailureReporter = (task: BackgroundTask, err: unknown) => void;

/** Runs `task` now; a synchronous throw or a rejection goes to `report`. Never throws; its promise never rejects. */
export async function runTask(name: BackgroundTask, task: () => unknown, report: TaskFailureReporter): Promise<void> {
  try {
    await task();
  } catch (err) {
    try {
      report(name, err);
    } catch {
      // The reporter is the last place a failure can go; one that fails itself is dropped.
    }
  }
}
