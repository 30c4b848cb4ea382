import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { lineChart, writeChart, type LineChartSpec, type Series } from './svg-chart.ts';

function spec(series: readonly Series[], extra: Partial<LineChartSpec> = {}): LineChartSpec {
  return { title: 'Latency', xLabel: 'concurrency', yLabel: 'p99 (ms)', series, ...extra };
}

/** Minimal well-formedness check: one <svg> root, every tag closed in order, no raw markup characters in text. */
function assertWellFormed(svg: string): void {
  assert.ok(svg.startsWith('<svg '), 'starts with <svg');
  assert.ok(svg.trimEnd().endsWith('</svg>'), 'ends with </svg>');
  const stack: string[] = [];
  let roots = 0;
  const tag = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<>]*")*)\s*(\/?)>/g;
  let last = 0;
  for (let m = tag.exec(svg); m !== null; m = tag.exec(svg)) {
    const between = svg.slice(last, m.index);
    assert.ok(!/[<>]/.test(between), `stray markup before ${m[0]}: ${JSON.stringify(between)}`);
    last = m.index + m[0].length;
    const [, closing, name = '', , selfClosing] = m;
    if (closing === '/') {
      assert.equal(stack.pop(), name, `unbalanced </${name}>`);
    } else if (selfClosing !== '/') {
      if (stack.length === 0) roots++;
      stack.push(name);
    } else {
      assert.ok(stack.length > 0, `self-closing <${name}/> outside the root`);
    }
  }
  assert.ok(!/[<>]/.test(svg.slice(last)), 'stray markup after the last tag');
  assert.deepEqual(stack, [], 'every tag closed');
  assert.equal(roots, 1, 'single root element');
  assert.ok(!/&(?!(amp|lt|gt|quot|apos);)/.test(svg), 'every & starts an entity');
}

interface Rect {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

function plotArea(svg: string): Rect {
  const m = /<rect class="plot-area" x="([-\d.]+)" y="([-\d.]+)" width="([-\d.]+)" height="([-\d.]+)"/.exec(svg);
  assert.ok(m, 'plot area present');
  return { x: Number(m[1]), y: Number(m[2]), width: Number(m[3]), height: Number(m[4]) };
}

/** Marker centres per series, in drawing order. */
function markers(svg: string): { x: number; y: number }[][] {
  const groups = svg.split('<g class="series"').slice(1);
  return groups.map((g) =>
    [...g.split('</g>')[0]!.matchAll(/<path class="marker" d="M([-\d.]+) ([-\d.]+)m/g)].map((m) => ({
      x: Number(m[1]),
      y: Number(m[2]),
    })),
  );
}

function lines(svg: string): string[] {
  return [...svg.matchAll(/<path class="line" d="([^"]*)"/g)].map((m) => m[1]!);
}

function axisLabels(svg: string, axis: 'x' | 'y'): string[] {
  const group = svg.split(`<g class="axis ${axis}"`)[1]?.split('</g>')[0] ?? '';
  return [...group.matchAll(/<text class="tick-label"[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]!);
}

function parseCompact(label: string): number {
  const m = /^(-?[\d.]+(?:e-?\d+)?)([kMGT]?)$/.exec(label);
  assert.ok(m, `compact number: ${label}`);
  const scale = { '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12 }[m[2] as '' | 'k' | 'M' | 'G' | 'T'];
  return Number(m[1]) * scale;
}

const close = (a: number, b: number, tol = 0.02): boolean => Math.abs(a - b) <= tol;

describe('lineChart', () => {
  it('produces a well-formed standalone SVG with title, background, axis labels and legend', () => {
    const svg = lineChart(spec([{ name: 'router', points: [[1, 10], [2, 20], [4, 35]] }], { thresholds: [{ label: 'SLO', y: 30 }] }));
    assertWellFormed(svg);
    assert.match(svg, /xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    assert.match(svg, /^<svg [^>]*>\n<title>Latency<\/title>/, '<title> is the first child, for screen readers');
    assert.match(svg, /<rect class="background"[^>]*fill="#ffffff"/);
    assert.match(svg, />concurrency<\/text>/);
    assert.match(svg, />p99 \(ms\)<\/text>/);
    assert.match(svg, /<g class="legend"[\s\S]*>router<\/text>/);
    assert.match(svg, /<g class="threshold">[\s\S]*>SLO<\/text>/);
    assert.ok(!svg.includes('no data'));
  });

  it('honours width and height and rejects unusable sizes', () => {
    const svg = lineChart(spec([{ name: 'a', points: [[0, 1]] }], { width: 1000, height: 500 }));
    assert.match(svg, /^<svg [^>]*width="1000" height="500" viewBox="0 0 1000 500"/);
    const area = plotArea(svg);
    assert.ok(area.x + area.width <= 1000 && area.y + area.height <= 500);
    assert.throws(() => lineChart(spec([], { width: 10 })), RangeError);
    assert.throws(() => lineChart(spec([], { height: Number.NaN })), RangeError);
  });

  it('XML-escapes series names, title, labels and thresholds', () => {
    const nasty = `p99 <router> & "friends" 'n'`;
    const svg = lineChart({
      title: 'A & B <vs> C',
      xLabel: 'x <1>',
      yLabel: 'y & z',
      series: [
        { name: nasty, points: [[0, 1], [1, 2]] },
        { name: 'R&D', points: [[0, 2], [1, 3]] },
      ],
      thresholds: [{ label: '<100ms & done>', y: 2.5 }],
    });
    assertWellFormed(svg);
    assert.ok(svg.includes('p99 &lt;router&gt; &amp; &quot;friends&quot; &apos;n&apos;'));
    assert.ok(svg.includes('R&amp;D'));
    assert.ok(svg.includes('<title>A &amp; B &lt;vs&gt; C</title>'));
    assert.ok(svg.includes('x &lt;1&gt;'));
    assert.ok(svg.includes('y &amp; z'));
    assert.ok(svg.includes('&lt;100ms &amp; done&gt;'));
    assert.ok(!svg.includes('<router>') && !svg.includes('R&D'));
  });

  it('maps points inside the plot area, higher y drawn higher and larger x further right', () => {
    const svg = lineChart(spec([{ name: 'a', points: [[3, 17], [7, 250], [40, 90], [12, 4]] }]));
    const area = plotArea(svg);
    const [pts] = markers(svg);
    assert.equal(pts?.length, 4);
    for (const p of pts) {
      assert.ok(p.x >= area.x && p.x <= area.x + area.width, `x ${p.x} inside plot`);
      assert.ok(p.y >= area.y && p.y <= area.y + area.height, `y ${p.y} inside plot`);
    }
    const [a, b, c, d] = pts;
    assert.ok(b!.y < c!.y && c!.y < a!.y && a!.y < d!.y, 'y order 250 > 90 > 17 > 4 is drawn top to bottom');
    assert.ok(a!.x < b!.x && b!.x < d!.x && d!.x < c!.x, 'x order 3 < 7 < 12 < 40 is drawn left to right');
    // Linear: the screen position is an affine function of the value.
    const slope = (b!.y - a!.y) / (250 - 17);
    assert.ok(close(c!.y, a!.y + slope * (90 - 17), 0.05));
  });

  it('spaces 1, 10 and 100 equally on a log axis, with decade ticks', () => {
    const svg = lineChart(spec([{ name: 'a', points: [[0, 1], [1, 10], [2, 100]] }], { logY: true }));
    const [pts] = markers(svg);
    const [p1, p10, p100] = pts!;
    assert.ok(p10!.y < p1!.y && p100!.y < p10!.y);
    assert.ok(close(p1!.y - p10!.y, p10!.y - p100!.y), `${p1!.y} ${p10!.y} ${p100!.y}`);
    assert.deepEqual(axisLabels(svg, 'y'), ['1', '10', '100']);

    const wide = lineChart(spec([{ name: 'a', points: [[0, 0.002], [1, 3e5]] }], { logY: true }));
    const labels = axisLabels(wide, 'y').map(parseCompact);
    for (const v of labels) assert.ok(close(Math.log10(v), Math.round(Math.log10(v)), 1e-9), `${v} is a power of ten`);
    assert.ok(labels[0]! <= 0.002 && labels.at(-1)! >= 3e5, 'decades cover the data');
  });

  it('clamps non-positive values on a log axis to the smallest positive value', () => {
    const svg = lineChart(spec([{ name: 'a', points: [[0, 0], [1, 5], [2, -3], [3, 50]] }], { logY: true }));
    assertWellFormed(svg);
    const [pts] = markers(svg);
    assert.equal(pts?.length, 4);
    assert.equal(pts[0]!.y, pts[1]!.y);
    assert.equal(pts[2]!.y, pts[1]!.y);
    assert.ok(!/NaN|Infinity/.test(svg));
  });

  it('skips NaN and Infinity points, leaving a gap in the line', () => {
    const svg = lineChart(
      spec([
        {
          name: 'gappy',
          points: [[0, 1], [1, 2], [2, Number.NaN], [3, 4], [Number.POSITIVE_INFINITY, 9], [5, 6], [6, Number.NEGATIVE_INFINITY]],
        },
      ]),
    );
    assertWellFormed(svg);
    assert.ok(!/NaN|Infinity/.test(svg));
    const [pts] = markers(svg);
    assert.equal(pts?.length, 4);
    const [d] = lines(svg);
    assert.equal(d!.match(/M/g)?.length, 3, 'three runs: [0,1], [3], [5]');
    assert.equal(d!.match(/L/g)?.length, 1);
    // Skipped points must not stretch the axis: it ends at the last finite x (5), not at Infinity or at 6.
    assert.equal(axisLabels(svg, 'x').map(parseCompact).at(-1), 5);
  });

  it('uses nice 1/2/5 × 10^k ticks that cover the data, with compact labels', () => {
    const cases: [number, number][] = [
      [0, 1],
      [0.013, 0.29],
      [3, 97],
      [-42, 17],
      [1234, 98765],
      [1e6, 3.3e6],
      [7, 7],
    ];
    for (const [lo, hi] of cases) {
      const svg = lineChart(spec([{ name: 'a', points: [[lo, lo], [hi, hi]] }]));
      for (const axis of ['x', 'y'] as const) {
        const ticks = axisLabels(svg, axis).map(parseCompact);
        assert.ok(ticks.length >= 2, `${axis} [${lo}, ${hi}] has ticks`);
        const step = ticks[1]! - ticks[0]!;
        const mantissa = step / 10 ** Math.floor(Math.log10(step) + 1e-9);
        assert.ok([1, 2, 5].some((m) => close(mantissa, m, 1e-6)), `step ${step} is 1/2/5 × 10^k`);
        ticks.forEach((t, i) => {
          assert.ok(close(t, ticks[0]! + i * step, step * 1e-6), `evenly spaced: ${ticks.join(', ')}`);
          assert.ok(close(t / step, Math.round(t / step), 1e-6), `${t} is a multiple of ${step}`);
        });
        assert.ok(ticks[0]! <= lo && ticks.at(-1)! >= hi, `[${ticks.join(', ')}] covers [${lo}, ${hi}]`);
      }
    }
  });

  it('formats tick labels compactly', () => {
    assert.deepEqual(axisLabels(lineChart(spec([{ name: 'a', points: [[0, 0], [1, 2000]] }])), 'y'), ['0', '500', '1k', '1.5k', '2k']);
    assert.ok(axisLabels(lineChart(spec([{ name: 'a', points: [[0, 0], [1, 0.3]] }])), 'y').includes('0.25'));
    assert.deepEqual(axisLabels(lineChart(spec([{ name: 'a', points: [[0, 1e3], [1, 1e6]] }], { logY: true })), 'y'), [
      '1k',
      '10k',
      '100k',
      '1M',
    ]);
  });

  it('draws thresholds inside the plot even when they are outside the data range', () => {
    const svg = lineChart(spec([{ name: 'a', points: [[0, 10], [1, 20]] }], { thresholds: [{ label: 'bar', y: 100 }] }));
    const area = plotArea(svg);
    const m = /<g class="threshold">\n<line x1="[\d.]+" y1="([\d.]+)"/.exec(svg);
    assert.ok(m);
    const y = Number(m[1]);
    assert.ok(y >= area.y && y < markers(svg)[0]![1]!.y, 'threshold 100 is above the point at 20 and within the plot');
  });

  it('gives each series its own palette colour, marker, and dash when asked', () => {
    const series = Array.from({ length: 8 }, (_, i): Series => ({ name: `s${i}`, points: [[0, i], [1, i + 1]], dashed: i === 3 }));
    const svg = lineChart(spec(series));
    const strokes = [...svg.matchAll(/<path class="line" [^>]*stroke="(#[0-9A-Fa-f]{6})"/g)].map((m) => m[1]);
    assert.equal(new Set(strokes).size, 8);
    const dashed = [...svg.matchAll(/<path class="line" [^>]*>/g)].map((m) => m[0].includes('stroke-dasharray'));
    assert.deepEqual(dashed, [false, false, false, true, false, false, false, false]);
  });

  it('renders "no data" instead of throwing when there is nothing to plot', () => {
    const empties: LineChartSpec[] = [
      spec([]),
      spec([{ name: 'empty', points: [] }]),
      spec([{ name: 'all NaN', points: [[Number.NaN, 1], [2, Number.NaN]] }], { logY: true, thresholds: [{ label: 't', y: 5 }] }),
    ];
    for (const s of empties) {
      const svg = lineChart(s);
      assertWellFormed(svg);
      assert.match(svg, /<text class="no-data"[^>]*>no data<\/text>/);
      assert.deepEqual(markers(svg).flat(), []);
    }
    // One empty series among others: the chart is drawn and the legend says which one is empty.
    const mixed = lineChart(spec([{ name: 'ok', points: [[0, 1], [1, 2]] }, { name: 'missing', points: [] }]));
    assertWellFormed(mixed);
    assert.ok(!mixed.includes('class="no-data"'));
    assert.ok(mixed.includes('>missing (no data)</text>'));
    assert.equal(markers(mixed)[0]?.length, 2);
  });

  it('truncates over-long legend names but keeps the full name in the series tooltip', () => {
    const name = 'x'.repeat(300);
    const svg = lineChart(spec([{ name, points: [[0, 1], [1, 2]] }]));
    assert.ok(svg.includes(`<title>${name}</title>`));
    const legendText = /<g class="legend"[\s\S]*?<text [^>]*>([^<]*)<\/text>/.exec(svg)?.[1];
    assert.ok(legendText !== undefined && legendText.length < 60 && legendText.endsWith('…'));
    assert.ok(plotArea(svg).width > 720 * 0.5, 'the plot keeps most of the width');
  });

  it('is deterministic', () => {
    const make = (): LineChartSpec =>
      spec(
        [
          { name: 'a', points: [[1, 0.5], [2, 1.25], [3, Number.NaN], [4, 3]] },
          { name: 'b', points: [[1, 2], [4, 1]], dashed: true },
        ],
        { logY: true, thresholds: [{ label: 'slo', y: 2 }] },
      );
    const first = lineChart(make());
    assert.equal(lineChart(make()), first);
    assert.equal(lineChart(make()), lineChart(make()));
  });
});

describe('writeChart', () => {
  it('creates missing directories, writes the SVG, and returns the path', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svg-chart-'));
    try {
      const path = join(dir, 'nested', 'deeper', 'chart.svg');
      const svg = lineChart(spec([{ name: 'a', points: [[0, 1]] }]));
      assert.equal(writeChart(path, svg), path);
      assert.equal(readFileSync(path, 'utf8'), svg);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
