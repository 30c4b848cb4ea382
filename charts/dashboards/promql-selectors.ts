/**
 * The series selectors of a PromQL expression, found by a small lexer: enough
 * for the dashboard tests to check every metric a panel reads exists and is
 * read the right way (counters only through a range). Prometheus itself
 * parses every query in the live test; this only has to find names.
 */

/** One `metric{...}` or `metric{...}[range]` in an expression. */
export interface Selector {
  readonly metric: string;
  /** Followed by a range (`[...]`): read through rate()/increase() and friends. */
  readonly ranged: boolean;
  /** The text between `{` and `}` ('' when none). */
  readonly matchers: string;
}

/** Keywords that take a parenthesised label list rather than an expression. */
const LABEL_LIST_KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
/** Aggregation operators: a `by`/`without` clause may sit between them and their `(`. */
const AGGREGATIONS = new Set(['sum', 'min', 'max', 'avg', 'count', 'group', 'stddev', 'stdvar', 'topk', 'bottomk', 'quantile', 'count_values', 'limitk', 'limit_ratio']);
/** Operators and modifiers spelled as words. */
const WORD_OPERATORS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'atan2', 'inf', 'nan']);

/** Every selector in `expr`, in order. Throws on unbalanced braces or brackets or an unterminated string. */
export function selectors(expr: string): Selector[] {
  const found: Selector[] = [];
  let i = 0;
  while (i < expr.length) {
    const c = expr[i] as string;
    if (c === '"' || c === "'" || c === '`') {
      i = skipString(expr, i);
    } else if (/[a-zA-Z_:]/.test(c)) {
      const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(expr.slice(i))?.[0] as string;
      i += name.length;
      const next = skipSpace(expr, i);
      const lower = name.toLowerCase();
      if (LABEL_LIST_KEYWORDS.has(lower)) {
        if (expr[next] === '(') i = skipGroup(expr, next, '(', ')');
      } else if (AGGREGATIONS.has(lower)) {
        // the clause or the parenthesis that follows is read by the next iterations
      } else if (WORD_OPERATORS.has(lower)) {
        if (lower === 'offset') i = skipDuration(expr, next);
      } else if (expr[next] !== '(') {
        i = readSelector(expr, name, i, found);
      }
    } else if (/[0-9.]/.test(c)) {
      i += /^[0-9.]+(?:e[+-]?[0-9]+)?[a-zA-Z]*/i.exec(expr.slice(i))?.[0].length ?? 1;
    } else if (c === '{') {
      throw new Error(`selector without a metric name at ${i} in ${expr}`);
    } else if (c === '[') {
      i = skipGroup(expr, i, '[', ']'); // a subquery range after a parenthesised expression
    } else {
      i++;
    }
  }
  return found;
}

function readSelector(expr: string, metric: string, from: number, found: Selector[]): number {
  let i = skipSpace(expr, from);
  let matchers = '';
  if (expr[i] === '{') {
    const end = skipGroup(expr, i, '{', '}');
    matchers = expr.slice(i + 1, end - 1);
    i = skipSpace(expr, end);
  }
  const ranged = expr[i] === '[';
  if (ranged) i = skipGroup(expr, i, '[', ']');
  found.push({ metric, ranged, matchers });
  return i;
}

function skipSpace(expr: string, i: number): number {
  while (i < expr.length && /\s/.test(expr[i] as string)) i++;
  return i;
}

function skipDuration(expr: string, i: number): number {
  return i + (/^-?[0-9a-zA-Z]+/.exec(expr.slice(i))?.[0].length ?? 0);
}

function skipString(expr: string, i: number): number {
  const quote = expr[i];
  for (let j = i + 1; j < expr.length; j++) {
    if (expr[j] === '\\' && quote !== '`') j++;
    else if (expr[j] === quote) return j + 1;
  }
  throw new Error(`unterminated string at ${i} in ${expr}`);
}

/** Index just past the `close` that balances the `open` at `i`, skipping strings. */
function skipGroup(expr: string, i: number, open: string, close: string): number {
  let depth = 0;
  for (let j = i; j < expr.length; j++) {
    const c = expr[j];
    if (c === '"' || c === "'" || c === '`') {
      j = skipString(expr, j) - 1;
    } else if (c === open) {
      depth++;
    } else if (c === close && --depth === 0) {
      return j + 1;
    }
  }
  throw new Error(`unbalanced ${open} at ${i} in ${expr}`);
}
