/**
 * The size limits of product code (docs/architecture.md, "Size limits"): no
 * class in router/ or discovery/ over 300 lines, from its declaration's first
 * line to its closing brace, found by parsing every product file with the
 * TypeScript compiler (no core ESLint rule measures a class). And the file
 * limit, which lint enforces with `max-lines`, shown refusing a file one line
 * too long and letting its one exception through.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { ESLint } from 'eslint';
import ts from 'typescript';
import tseslint from 'typescript-eslint';

const ROOT = join(import.meta.dirname, '..', '..');
const MAX_CLASS_LINES = 300;
const MAX_FILE_LINES = 400;

/**
 * Classes allowed past MAX_CLASS_LINES, as `file: class`, each with the reason. The same files are
 * the exceptions to the file limit in eslint.config.js (OVERSIZED_FILES).
 */
const LONG_CLASS_EXCEPTIONS: ReadonlyMap<string, string> = new Map([
  ['router/request/json-body-scanner.ts: JsonBodyScanner', 'the state machine that reads best in one piece (its file header says why)'],
]);

/** A class longer than the limit. */
interface LongClass {
  readonly file: string;
  readonly name: string;
  readonly lines: number;
}

/** Product TypeScript files under `dir` (relative to the repo), unit tests left out. */
function productFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.ts') && !path.endsWith('.test.ts') && !path.endsWith('.d.ts'))
    .map((path) => join(dir, path));
}

/** Every class in `source` (declarations and expressions) longer than `maxLines`, first line to last. */
function longClasses(file: string, source: string, maxLines: number): LongClass[] {
  const sourceFile = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: LongClass[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isClassDeclaration(node) || ts.isClassExpression(node)) {
      const first = sourceFile.getLineAndCharacterOfPosition(node.getStart(sourceFile)).line;
      const last = sourceFile.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > maxLines) found.push({ file, name: node.name?.text ?? '(anonymous)', lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return found;
}

/** A class of `bodyLines` lines between its declaration line and its closing brace. */
function classOfLines(bodyLines: number): string {
  return `export class Probe {\n${'  readonly a = 1;\n'.repeat(bodyLines)}}\n`;
}

describe('size limits', () => {
  it(`no class in router/ or discovery/ is over ${MAX_CLASS_LINES} lines`, () => {
    const files = [...productFiles('router'), ...productFiles('discovery')];
    assert.ok(files.length > 100, `found the product files (${files.length})`);
    const long = files
      .flatMap((file) => longClasses(file, readFileSync(join(ROOT, file), 'utf8'), MAX_CLASS_LINES))
      .filter((found) => !LONG_CLASS_EXCEPTIONS.has(`${found.file}: ${found.name}`));
    assert.deepEqual(long, [], `classes over ${MAX_CLASS_LINES} lines: ${long.map((c) => `${c.file} ${c.name} (${c.lines})`).join(', ')}`);
  });

  it('counts a class from its declaration to its closing brace, nested classes too', () => {
    assert.deepEqual(longClasses('probe.ts', classOfLines(MAX_CLASS_LINES - 2), MAX_CLASS_LINES), []);
    assert.deepEqual(longClasses('probe.ts', classOfLines(MAX_CLASS_LINES - 1), MAX_CLASS_LINES), [{ file: 'probe.ts', name: 'Probe', lines: MAX_CLASS_LINES + 1 }]);
    const nested = `export function make() {\n  return class {\n${'    a = 1;\n'.repeat(MAX_CLASS_LINES)}  };\n}\n`;
    assert.deepEqual(longClasses('probe.ts', nested, MAX_CLASS_LINES), [{ file: 'probe.ts', name: '(anonymous)', lines: MAX_CLASS_LINES + 2 }]);
  });

  describe(`lint refuses a product file over ${MAX_FILE_LINES} lines`, () => {
    // The probes do not exist: ESLint picks their config by path. Type-aware parsing is off (it
    // knows only files on disk), and only max-lines runs.
    const eslint = new ESLint({
      cwd: ROOT,
      overrideConfigFile: join(ROOT, 'eslint.config.js'),
      overrideConfig: tseslint.configs.disableTypeChecked,
      ruleFilter: ({ ruleId }) => ruleId === 'max-lines',
    });
    /** The max-lines messages for `code` linted as the file at `path` (relative to the repo). */
    const maxLinesErrors = async (path: string, code: string): Promise<string[]> => {
      const [result] = await eslint.lintText(code, { filePath: join(ROOT, path) });
      assert.ok(result !== undefined);
      return result.messages.map((m) => `${relative(ROOT, join(ROOT, path))}: ${m.message}`);
    };
    // Lines as `wc -l` counts them: a comment and a blank line count like code.
    const fileOfLines = (lines: number): string => `// probe\n\n${'export const a = 1;\n'.repeat(lines - 2)}`;

    it(`refuses ${MAX_FILE_LINES + 1} lines in router/ and discovery/, comments and blank lines counted`, async () => {
      assert.deepEqual(await maxLinesErrors('router/load/size-probe.ts', fileOfLines(MAX_FILE_LINES)), []);
      assert.equal((await maxLinesErrors('router/load/size-probe.ts', fileOfLines(MAX_FILE_LINES + 1))).length, 1);
      assert.equal((await maxLinesErrors('discovery/kubernetes/size-probe.ts', fileOfLines(MAX_FILE_LINES + 1))).length, 1);
    });

    it('lets the body scanner and unit tests through', async () => {
      assert.deepEqual(await maxLinesErrors('router/request/json-body-scanner.ts', fileOfLines(MAX_FILE_LINES + 1)), []);
      assert.deepEqual(await maxLinesErrors('router/load/size-probe.test.ts', fileOfLines(MAX_FILE_LINES + 1)), []);
    });
  });
});
