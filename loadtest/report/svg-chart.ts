/**
 * Dependency-free SVG line charts for benchmark reports.
 *
 * The output is a hand-written SVG string so reports can be rendered in CI
 * without a browser or a charting package, and so the same results always
 * produce byte-identical files (easy to diff and to commit next to the JSON).
 *
 * @module
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** One line on a chart. */
export interface Series {
  /** Legend text; may contain any characters (it is XML-escaped). */
  readonly name: string;
  /** `[x, y]` pairs drawn in the given order; non-finite pairs leave a gap. */
  readonly points: readonly (readonly [number, number])[];
  /** dashed line, e.g. for a baseline */
  readonly dashed?: boolean;
}

/** A horizontal reference line, e.g. a latency objective to stay under. */
export interface Threshold {
  /** Text drawn just above the line's right end. */
  readonly label: string;
  /** Data value at which the line is drawn; non-finite thresholds are ignored. */
  readonly y: number;
}

/** What {@link lineChart} draws. */
export interface LineChartSpec {
  /** Heading above the plot, also used as the SVG's accessible `<title>`. */
  readonly title: string;
  /** Caption under the x axis. */
  readonly xLabel: string;
  /** Caption beside the y axis. */
  readonly yLabel: string;
  /** Lines to draw; each gets its own colour and marker shape. */
  readonly series: readonly Series[];
  /** log10 y axis (latency spans orders of magnitude); non-positive values are clamped to the smallest positive value */
  readonly logY?: boolean;
  /** optional horizontal reference lines, e.g. a bar to meet */
  readonly thresholds?: readonly Threshold[];
  /** Pixel width of the document; default 720, at least 240. */
  readonly width?: number;
  /** Pixel height of the document; default 420, at least 160. */
  readonly height?: number;
}

// Okabe-Ito, reordered so the low-contrast yellow comes last: it is hard to
// read on white, so only charts with eight or more series ever use it.
const PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000', '#F0E442'] as const;
const MARKERS = ['circle', 'square', 'diamond', 'triangle'] as const;
type Marker = (typeof MARKERS)[number];

const FONT = 'Helvetica, Arial, sans-serif';
const TEXT_COLOUR = '#222222';
const MIN_WIDTH = 240;
const MIN_HEIGHT = 160;
const TITLE_BAND = 44;
const BOTTOM_BAND = 50;
const LEGEND_ROW = 18;
// Average glyph advance as a fraction of font size; we cannot measure text
// without a renderer, and overestimating only costs a little whitespace.
const CHAR_WIDTH_EM = 0.6;

type Point = readonly [number, number];

interface Tick {
  readonly value: number;
  readonly label: string;
}

interface Axis {
  readonly lo: number;
  readonly hi: number;
  readonly log: boolean;
  readonly ticks: readonly Tick[];
  /** Unlabelled gridlines; only log axes use them, to show the 2..9 spacing. */
  readonly minor: readonly number[];
}

/** Renders a line chart (markers at each point) as a standalone SVG document. */
export function lineChart(spec: LineChartSpec): string {
  const width = spec.width ?? 720;
  const height = spec.height ?? 420;
  if (!Number.isFinite(width) || !Number.isFinite(height) || width < MIN_WIDTH || height < MIN_HEIGHT) {
    throw new RangeError(`chart must be at least ${MIN_WIDTH}x${MIN_HEIGHT}, got ${width}x${height}`);
  }
  const logY = spec.logY ?? false;

  const finite = spec.series.map((s) => s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y)));
  const rawThresholds = (spec.thresholds ?? []).filter((t) => Number.isFinite(t.y));
  let minPositive = Infinity;
  for (const pts of finite) for (const [, y] of pts) if (y > 0 && y < minPositive) minPositive = y;
  for (const t of rawThresholds) if (t.y > 0 && t.y < minPositive) minPositive = t.y;
  // With nothing positive at all there is no natural floor; 1 gives a sane decade.
  const floorY = Number.isFinite(minPositive) ? minPositive : 1;
  const clampY = (y: number): number => (logY && y <= 0 ? floorY : y);
  const points: readonly (readonly Point[])[] = finite.map((pts) => pts.map(([x, y]): Point => [x, clampY(y)]));
  const thresholds = rawThresholds.map((t) => ({ label: t.label, y: clampY(t.y) }));
  const hasData = points.some((p) => p.length > 0);

  const top = TITLE_BAND;
  const bottom = height - BOTTOM_BAND;
  const plotH = bottom - top;

  let yAxis: Axis | undefined;
  if (hasData) {
    const ys = [...points.flatMap((p) => p.map(([, y]) => y)), ...thresholds.map((t) => t.y)];
    const target = Math.max(2, Math.floor(plotH / 45));
    yAxis = logY ? logAxis(Math.min(...ys), Math.max(...ys), target) : linearAxis(Math.min(...ys), Math.max(...ys), target);
  }
  const yTickChars = Math.max(0, ...(yAxis?.ticks ?? []).map((t) => t.label.length));
  // Band for the rotated y caption, then room for the widest tick label.
  const left = 30 + 10 + Math.ceil(yTickChars * 11 * CHAR_WIDTH_EM);

  const legend = layoutLegend(spec.series, finite, width, plotH);
  const right = width - 12 - (legend.width > 0 ? legend.width + 12 : 0);
  const plotW = right - left;

  let xAxis: Axis | undefined;
  if (hasData) {
    const xs = points.flatMap((p) => p.map(([x]) => x));
    xAxis = linearAxis(Math.min(...xs), Math.max(...xs), Math.max(2, Math.floor(plotW / 90)));
  }

  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${num(width)}" height="${num(height)}" viewBox="0 0 ${num(width)} ${num(height)}" role="img">`,
    `<title>${esc(spec.title)}</title>`,
    // Explicit white so the chart stays readable in dark-mode viewers that
    // would otherwise show dark text on a transparent (dark) background.
    `<rect class="background" x="0" y="0" width="${num(width)}" height="${num(height)}" fill="#ffffff"/>`,
    `<text class="chart-title" x="${num(width / 2)}" y="26" text-anchor="middle" font-family="${FONT}" font-size="16" font-weight="bold" fill="${TEXT_COLOUR}">${esc(spec.title)}</text>`,
    `<rect class="plot-area" x="${num(left)}" y="${num(top)}" width="${num(plotW)}" height="${num(plotH)}" fill="none" stroke="#cccccc"/>`,
  );

  if (xAxis !== undefined && yAxis !== undefined) {
    const ax = xAxis;
    const ay = yAxis;
    const sx = (x: number): number => left + fraction(ax, x) * plotW;
    const sy = (y: number): number => bottom - fraction(ay, y) * plotH;
    renderAxes(out, ax, ay, sx, sy, left, right, top, bottom);
    for (const t of thresholds) {
      const y = sy(t.y);
      out.push(
        `<g class="threshold">`,
        `<line x1="${num(left)}" y1="${num(y)}" x2="${num(right)}" y2="${num(y)}" stroke="#666666" stroke-width="1.25" stroke-dasharray="2 3"/>`,
        `<text x="${num(right - 4)}" y="${num(y - 4)}" text-anchor="end" font-family="${FONT}" font-size="11" fill="#444444">${esc(t.label)}</text>`,
        `</g>`,
      );
    }
    points.forEach((pts, i) => {
      const s = spec.series[i];
      if (s === undefined) return;
      renderSeries(out, s, i, pts, sx, sy);
    });
  } else {
    out.push(
      `<text class="no-data" x="${num(left + plotW / 2)}" y="${num(top + plotH / 2)}" text-anchor="middle" font-family="${FONT}" font-size="14" fill="#666666">no data</text>`,
    );
  }

  out.push(
    `<text class="axis-label x" x="${num(left + plotW / 2)}" y="${num(height - 12)}" text-anchor="middle" font-family="${FONT}" font-size="12" fill="${TEXT_COLOUR}">${esc(spec.xLabel)}</text>`,
    `<text class="axis-label y" x="20" y="${num(top + plotH / 2)}" transform="rotate(-90 20 ${num(top + plotH / 2)})" text-anchor="middle" font-family="${FONT}" font-size="12" fill="${TEXT_COLOUR}">${esc(spec.yLabel)}</text>`,
  );
  renderLegend(out, legend, spec.series, right + 12, top);
  out.push('</svg>');
  return out.join('\n') + '\n';
}

/** Writes `svg` to `path` (creating directories) and returns the path. */
export function writeChart(path: string, svg: string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, svg, 'utf8');
  return path;
}

function renderAxes(
  out: string[],
  xAxis: Axis,
  yAxis: Axis,
  sx: (x: number) => number,
  sy: (y: number) => number,
  left: number,
  right: number,
  top: number,
  bottom: number,
): void {
  out.push(`<g class="grid" stroke="#e6e6e6" stroke-width="1">`);
  for (const v of yAxis.minor) out.push(`<line class="minor" x1="${num(left)}" y1="${num(sy(v))}" x2="${num(right)}" y2="${num(sy(v))}" stroke="#f2f2f2"/>`);
  for (const t of yAxis.ticks) out.push(`<line x1="${num(left)}" y1="${num(sy(t.value))}" x2="${num(right)}" y2="${num(sy(t.value))}"/>`);
  for (const t of xAxis.ticks) out.push(`<line x1="${num(sx(t.value))}" y1="${num(top)}" x2="${num(sx(t.value))}" y2="${num(bottom)}"/>`);
  out.push(`</g>`);

  out.push(`<g class="axis y" font-family="${FONT}" font-size="11" fill="${TEXT_COLOUR}">`);
  out.push(`<line x1="${num(left)}" y1="${num(top)}" x2="${num(left)}" y2="${num(bottom)}" stroke="#333333"/>`);
  for (const t of yAxis.ticks) {
    const y = sy(t.value);
    out.push(
      `<line x1="${num(left - 4)}" y1="${num(y)}" x2="${num(left)}" y2="${num(y)}" stroke="#333333"/>`,
      `<text class="tick-label" x="${num(left - 7)}" y="${num(y + 4)}" text-anchor="end">${esc(t.label)}</text>`,
    );
  }
  out.push(`</g>`);

  out.push(`<g class="axis x" font-family="${FONT}" font-size="11" fill="${TEXT_COLOUR}">`);
  out.push(`<line x1="${num(left)}" y1="${num(bottom)}" x2="${num(right)}" y2="${num(bottom)}" stroke="#333333"/>`);
  for (const t of xAxis.ticks) {
    const x = sx(t.value);
    out.push(
      `<line x1="${num(x)}" y1="${num(bottom)}" x2="${num(x)}" y2="${num(bottom + 4)}" stroke="#333333"/>`,
      `<text class="tick-label" x="${num(x)}" y="${num(bottom + 17)}" text-anchor="middle">${esc(t.label)}</text>`,
    );
  }
  out.push(`</g>`);
}

function renderSeries(
  out: string[],
  s: Series,
  index: number,
  pts: readonly Point[],
  sx: (x: number) => number,
  sy: (y: number) => number,
): void {
  const colour = seriesColour(index);
  // Split at the non-finite points the caller gave us so a missing sample
  // shows as a gap instead of a misleading straight segment across it.
  const segments: string[] = [];
  let current: string[] = [];
  // `pts` holds the finite points, clamped, in order; walk the raw points
  // alongside it to know where the gaps go.
  let next = 0;
  for (const [x, y] of s.points) {
    if (!Number.isFinite(x) || !Number.isFinite(y)) {
      if (current.length > 0) segments.push(current.join(''));
      current = [];
      continue;
    }
    const p = pts[next++];
    if (p === undefined) break;
    current.push(`${current.length === 0 ? 'M' : 'L'}${num(sx(p[0]))} ${num(sy(p[1]))}`);
  }
  if (current.length > 0) segments.push(current.join(''));

  out.push(`<g class="series" data-index="${index}">`, `<title>${esc(s.name)}</title>`);
  const d = segments.join(' ');
  if (d.length > 0) {
    out.push(
      `<path class="line" d="${d}" fill="none" stroke="${colour}" stroke-width="2" stroke-linejoin="round" stroke-linecap="round"${s.dashed === true ? ' stroke-dasharray="6 4"' : ''}/>`,
    );
  }
  const shape = seriesMarker(index);
  for (const [x, y] of pts) {
    out.push(`<path class="marker" d="${markerPath(shape, sx(x), sy(y))}" fill="${colour}" stroke="#ffffff" stroke-width="1"/>`);
  }
  out.push(`</g>`);
}

interface LegendLayout {
  readonly width: number;
  readonly labels: readonly string[];
  /** Series beyond the rows that fit, summarised as "+N more". */
  readonly hidden: number;
}

function layoutLegend(
  series: readonly Series[],
  finite: readonly (readonly Point[])[],
  chartWidth: number,
  plotH: number,
): LegendLayout {
  if (series.length === 0) return { width: 0, labels: [], hidden: 0 };
  const suffixes = series.map((_, i) => ((finite[i]?.length ?? 0) === 0 ? ' (no data)' : ''));
  const sample = 34;
  const charW = 12 * CHAR_WIDTH_EM;
  const ideal = sample + Math.max(...series.map((s, i) => [...s.name].length + (suffixes[i]?.length ?? 0))) * charW;
  // Cap the legend so a long series name cannot squeeze the plot to nothing;
  // the full name stays available in the series' <title> tooltip.
  const width = Math.ceil(Math.min(ideal, chartWidth * 0.3));
  const maxChars = Math.max(4, Math.floor((width - sample) / charW));
  const labels = series.map((s, i) => truncate(s.name, maxChars - (suffixes[i]?.length ?? 0)) + (suffixes[i] ?? ''));
  const rows = Math.max(1, Math.floor(plotH / LEGEND_ROW));
  if (labels.length <= rows) return { width, labels, hidden: 0 };
  return { width, labels: labels.slice(0, rows - 1), hidden: labels.length - (rows - 1) };
}

function renderLegend(out: string[], legend: LegendLayout, series: readonly Series[], x: number, top: number): void {
  if (legend.width === 0) return;
  out.push(`<g class="legend" font-family="${FONT}" font-size="12" fill="${TEXT_COLOUR}">`);
  legend.labels.forEach((label, i) => {
    const y = top + 6 + i * LEGEND_ROW;
    const colour = seriesColour(i);
    const dash = series[i]?.dashed === true ? ' stroke-dasharray="6 4"' : '';
    out.push(
      `<g class="legend-entry">`,
      `<line x1="${num(x)}" y1="${num(y)}" x2="${num(x + 26)}" y2="${num(y)}" stroke="${colour}" stroke-width="2"${dash}/>`,
      `<path d="${markerPath(seriesMarker(i), x + 13, y)}" fill="${colour}" stroke="#ffffff" stroke-width="1"/>`,
      `<text x="${num(x + 34)}" y="${num(y + 4)}">${esc(label)}</text>`,
      `</g>`,
    );
  });
  if (legend.hidden > 0) {
    const y = top + 6 + legend.labels.length * LEGEND_ROW;
    out.push(`<text class="legend-more" x="${num(x + 34)}" y="${num(y + 4)}">+${legend.hidden} more</text>`);
  }
  out.push(`</g>`);
}

function seriesColour(index: number): string {
  return PALETTE[index % PALETTE.length] ?? '#000000';
}

// Shapes rotate against colours so that past the eight palette colours the
// (colour, shape) pair is still unique, and so greyscale prints stay legible.
function seriesMarker(index: number): Marker {
  return MARKERS[(index + Math.floor(index / PALETTE.length)) % MARKERS.length] ?? 'circle';
}

// Every marker path starts with an absolute move to its centre, which keeps
// the centre recoverable from the markup (tests rely on it).
function markerPath(shape: Marker, x: number, y: number): string {
  const at = `M${num(x)} ${num(y)}`;
  switch (shape) {
    case 'circle':
      return `${at}m-3.5 0a3.5 3.5 0 1 0 7 0a3.5 3.5 0 1 0 -7 0z`;
    case 'square':
      return `${at}m-3.2 -3.2h6.4v6.4h-6.4z`;
    case 'diamond':
      return `${at}m0 -4.3l4.3 4.3l-4.3 4.3l-4.3 -4.3z`;
    case 'triangle':
      return `${at}m0 -4.3l4 7h-8z`;
  }
}

function fraction(axis: Axis, v: number): number {
  if (axis.log) return (Math.log10(v) - Math.log10(axis.lo)) / (Math.log10(axis.hi) - Math.log10(axis.lo));
  return (v - axis.lo) / (axis.hi - axis.lo);
}

/** Largest 1/2/5 × 10^k step that splits `span` into at most `target` intervals. */
function niceStep(span: number, target: number): number {
  const rough = span / target;
  const exponent = Math.floor(Math.log10(rough));
  for (const m of [1, 2, 5]) {
    const step = Number(`${m}e${exponent}`);
    // Tolerance: rough can land a hair above an exact nice value through float error.
    if (step >= rough * (1 - 1e-9)) return step;
  }
  return Number(`1e${exponent + 1}`);
}

function linearAxis(min: number, max: number, target: number): Axis {
  let lo = min;
  let hi = max;
  if (lo === hi) {
    // A flat series still needs a non-zero span; centre it in a band around the value.
    const pad = lo === 0 ? 1 : Math.abs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  const step = niceStep(hi - lo, target);
  const kLo = Math.floor(lo / step + 1e-9);
  const kHi = Math.ceil(hi / step - 1e-9);
  const ticks: Tick[] = [];
  for (let k = kLo; k <= kHi; k++) {
    // Round away the float noise of k*step (0.30000000000000004) so labels and gridlines sit on exact values.
    const value = Number((k * step).toPrecision(12));
    ticks.push({ value, label: formatTick(value) });
  }
  return { lo: ticks[0]?.value ?? lo, hi: ticks[ticks.length - 1]?.value ?? hi, log: false, ticks, minor: [] };
}

function logAxis(min: number, max: number, target: number): Axis {
  // The epsilon absorbs Math.log10(1000) === 2.9999999999999996.
  const eLo = Math.floor(Math.log10(min) + 1e-9);
  let eHi = Math.max(eLo + 1, Math.ceil(Math.log10(max) - 1e-9));
  const stepE = Math.max(1, Math.ceil((eHi - eLo) / target));
  eHi = eLo + Math.ceil((eHi - eLo) / stepE) * stepE;
  const ticks: Tick[] = [];
  const minor: number[] = [];
  for (let e = eLo; e <= eHi; e += stepE) {
    const decade = Number(`1e${e}`);
    ticks.push({ value: decade, label: formatTick(decade) });
    if (e === eHi || stepE > 1) continue;
    // A single decade would only get two labels, so also label its 2 and 5.
    const labelled = eHi - eLo === 1 ? [2, 5] : [];
    for (let m = 2; m <= 9; m++) {
      const v = Number(`${m}e${e}`);
      if (labelled.includes(m)) ticks.push({ value: v, label: formatTick(v) });
      else if (eHi - eLo <= 4) minor.push(v);
    }
  }
  ticks.sort((a, b) => a.value - b.value);
  return { lo: Number(`1e${eLo}`), hi: Number(`1e${eHi}`), log: true, ticks, minor };
}

const SUFFIXES: readonly (readonly [number, string])[] = [
  [1e12, 'T'],
  [1e9, 'G'],
  [1e6, 'M'],
  [1e3, 'k'],
];

/** Compact tick text: 1500 → "1.5k", 12 → "12", 0.25 → "0.25". */
function formatTick(v: number): string {
  if (v === 0) return '0';
  const abs = Math.abs(v);
  if (abs >= 1e15 || abs < 1e-4) return Number(v.toPrecision(6)).toExponential().replace('e+', 'e');
  for (const [scale, suffix] of SUFFIXES) {
    if (abs >= scale) return `${Number((v / scale).toPrecision(6))}${suffix}`;
  }
  return String(Number(v.toPrecision(6)));
}

function truncate(text: string, maxChars: number): string {
  // Spread by code point so an emoji or astral character is never cut in half.
  const chars = [...text];
  if (chars.length <= maxChars) return text;
  return chars.slice(0, Math.max(1, maxChars - 1)).join('') + '…';
}

// Two decimals is sub-pixel at any sane size and keeps the output stable and small.
function num(n: number): string {
  const r = Math.round(n * 100) / 100;
  return Object.is(r, -0) ? '0' : String(r);
}

function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => {
    switch (c) {
      case '&':
        return '&amp;';
      case '<':
        return '&lt;';
      case '>':
        return '&gt;';
      case '"':
        return '&quot;';
      default:
        return '&apos;';
    }
  });
}
