/**
 * The SVG charts of a `switchyard bench load` report, drawn with the
 * benchmarks' chart writer (loadtest/report/svg-chart.ts): time to first
 * token, inter-token latency, output token throughput and errors, each per
 * second with a line per step; and for a sweep, latency against the load.
 */
import { lineChart, type Series } from '../report/svg-chart.ts';
import type { LoadReport, SecondRow, StepReport } from './summary.ts';

/** One chart: its file name in the report directory, title and document. */
export interface Chart {
  readonly file: string;
  readonly title: string;
  readonly svg: string;
}

const X_LABEL = 'seconds since the step started (warm-up first)';

/** A series per step of `pick` over its seconds. */
function perStep(steps: readonly StepReport[], name: (step: StepReport) => string, pick: (row: SecondRow) => number, dashed = false): Series[] {
  return steps.map((step) => ({ name: name(step), dashed, points: step.seconds.map((row) => [row.second, pick(row)] as const) }));
}

/** p50 (solid) and p99 (dashed) lines per step. */
function quantiles(steps: readonly StepReport[], p50: (row: SecondRow) => number, p99: (row: SecondRow) => number): Series[] {
  return [...perStep(steps, (s) => `${s.label} p50`, p50), ...perStep(steps, (s) => `${s.label} p99`, p99, true)];
}

/** The charts of `report`. */
export function loadCharts(report: LoadReport): Chart[] {
  const { steps } = report;
  const chart = (file: string, title: string, yLabel: string, series: Series[]): Chart => ({ file, title, svg: lineChart({ title, xLabel: X_LABEL, yLabel, series }) });
  const charts = [
    chart('ttft.svg', 'Time to first token', 'ms', quantiles(steps, (r) => r.ttftP50Ms, (r) => r.ttftP99Ms)),
    chart('itl.svg', 'Inter-token latency', 'ms', quantiles(steps, (r) => r.itlP50Ms, (r) => r.itlP99Ms)),
    chart('throughput.svg', 'Output token throughput', 'output tokens/s', perStep(steps, (s) => s.label, (r) => r.outputTokens)),
    chart('errors.svg', 'Errors', 'failed requests/s', perStep(steps, (s) => s.label, (r) => r.failed)),
  ];
  if (steps.length > 1) {
    const x = (s: StepReport) => (s.load.kind === 'rate' ? s.load.perS : s.load.clients);
    const line = (name: string, pick: (s: StepReport) => number, dashed = false): Series => ({ name, dashed, points: steps.map((s) => [x(s), pick(s)] as const) });
    charts.push({
      file: 'sweep.svg',
      title: 'Latency by step',
      svg: lineChart({
        title: 'Latency by step',
        xLabel: steps[0]?.load.kind === 'rate' ? 'offered requests/s' : 'concurrent clients',
        yLabel: 'ms',
        series: [line('TTFT p50', (s) => s.ttftMs.p50), line('TTFT p99', (s) => s.ttftMs.p99, true), line('e2e p50', (s) => s.e2eMs.p50), line('e2e p99', (s) => s.e2eMs.p99, true)],
      }),
    });
  }
  return charts;
}
