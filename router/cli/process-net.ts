/**
 * The last net under `switchyard serve`: a rejection nobody handled or an
 * exception nobody caught is logged and counted
 * (`switchyard_background_failures_total{task="unhandled_rejection"|"uncaught_exception"}`)
 * and the process keeps running.
 *
 * Why not exit, as Node does by default: the failures that reached here were
 * a malformed Redis reply thrown inside a timer's promise, and the same reply
 * came back after every restart, so exiting turned one bad answer into every
 * replica crash-looping at once while requests failed. A rejection has
 * already unwound its own task, and the router's per-request state is owned
 * by each request; what a stray exception may leave wrong is one background
 * task's bookkeeping, which its next run rebuilds. Kubernetes still restarts
 * a process that is truly wedged: /livez answers from its own thread and
 * fails when the event loop stops turning. Each such failure is a bug to
 * fix: the counter is for alerting on it, not for living with it.
 */

/** Where the net reports (the router's log and metrics). */
export type ProcessFailureReporter = (kind: 'unhandled_rejection' | 'uncaught_exception', err: unknown) => void;

/** Installs the net; returns a function that removes it (tests, shutdown). */
export function installProcessNet(report: ProcessFailureReporter, target: NodeJS.Process = process): () => void {
  const onRejection = (reason: unknown) => report('unhandled_rejection', reason);
  const onException = (err: Error) => report('uncaught_exception', err);
  target.on('unhandledRejection', onRejection);
  target.on('uncaughtException', onException);
  return () => {
    target.off('unhandledRejection', onRejection);
    target.off('uncaughtException', onException);
  };
}
