/**
 * The rows of docs/compatibility.md. Each interoperability test writes its
 * row after its assertions passed, so a row exists only for what was run and
 * held; `compat-report.ts` turns the rows into the page, and CI fails when the
 * page in the repository differs from what the suite just produced.
 *
 * Rows must be deterministic: versions, what was exercised and the result,
 * never timings (those go to the test's own output and the benchmark docs).
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One row of the compatibility table. */
export interface CompatRow {
  /** `client` (what talks to switchyard) or `engine` (what switchyard talks to). */
  readonly area: 'client' | 'engine';
  /** The client or engine, e.g. `openai (npm)`, `vLLM metrics`. */
  readonly subject: string;
  /** The version exercised, read from what was installed or named by the fixture. */
  readonly version: string;
  /** What was exercised, one short sentence. */
  readonly exercised: string;
  /** The outcome, e.g. `pass`, or `pass: 200/200 users, 0 errors`. */
  readonly result: string;
  /** Where the row comes from: the test file relative to the repository, and the test's name. */
  readonly test: string;
}

/** Where rows are written: `SWITCHYARD_COMPAT_ROWS` or `loadtest/results/compat-rows`. */
export const ROWS_DIR = process.env.SWITCHYARD_COMPAT_ROWS ?? fileURLToPath(new URL('../../loadtest/results/compat-rows/', import.meta.url));

/** Records one row; a later row with the same subject and exercised text replaces it. */
export function recordRow(row: CompatRow): void {
  mkdirSync(ROWS_DIR, { recursive: true });
  const name = `${row.area}-${row.subject}-${row.exercised}`.toLowerCase().replace(/[^a-z0-9]+/g, '-').slice(0, 120);
  writeFileSync(join(ROWS_DIR, `${name}.json`), JSON.stringify(row, null, 2) + '\n');
}

/** The page's order: clients before engines, then by subject, then by what was exercised. */
export function pageOrder(a: CompatRow, b: CompatRow): number {
  return a.area.localeCompare(b.area) || a.subject.localeCompare(b.subject) || a.exercised.localeCompare(b.exercised);
}

/** Every recorded row, in {@link pageOrder}. */
export function readRows(dir = ROWS_DIR): CompatRow[] {
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.json'));
  } catch {
    return [];
  }
  const rows = files.map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as CompatRow);
  return rows.sort(pageOrder);
}
