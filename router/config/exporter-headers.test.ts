import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readExporterHeaders } from './exporter-headers.ts';
import { ConfigError } from './load.ts';

const dir = mkdtempSync(join(tmpdir(), 'switchyard-exporter-headers-'));
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}
const SECRET = 'Qm4Vt8Lr2Np6Xk';

describe('readExporterHeaders', () => {
  it('reads the OTEL_EXPORTER_OTLP_HEADERS form: names in lower case, values percent-decoded', () => {
    assert.deepEqual(readExporterHeaders(file('good', `Authorization=Bearer%20${SECRET}, x-scope-orgid = team-a\n`)), { authorization: `Bearer ${SECRET}`, 'x-scope-orgid': 'team-a' });
  });

  it('refuses a malformed entry naming its position and the file, never its content', () => {
    for (const [name, text, problem] of [
      ['no-equals', `authorization ${SECRET}`, /entry 1 is not name=value/],
      ['bad-name', `a=b,bad name=${SECRET}`, /entry 2 is not name=value/],
      ['bad-escape', `authorization=${SECRET}%zz`, /entry 1 has a value that is not percent-encoded/],
      ['control', `authorization=${SECRET}%0a`, /entry 1 decodes to a control/],
      ['two-lines', `a=${SECRET}\nb=c`, /holds 2 lines/],
    ] as const) {
      const path = file(name, text);
      assert.throws(
        () => readExporterHeaders(path),
        (err: unknown) => err instanceof ConfigError && problem.test(err.message) && err.message.includes(path) && !err.message.includes(SECRET),
        name,
      );
    }
  });
});
